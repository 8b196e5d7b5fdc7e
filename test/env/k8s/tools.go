//go:build tools

// Package tools pins the commands that test/env/install.sh builds with
// `go build -o <cache>/bin/<name> <package path>`. The build tag keeps this file out of
// every build; `go mod tidy` still sees the imports and keeps their requirements.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
