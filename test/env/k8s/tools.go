//go:build tools

// Package tools pins the commands built from this module (test/env/install.sh,
// test/cluster/install.sh, test/pulumi/install-kubernetes.sh) with
// `go build -o <bin>/<name> <package path>`. The build tag keeps this file out of every build;
// `go mod tidy` still sees the imports and keeps their requirements.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
	_ "github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity"
	_ "github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner"
	_ "github.com/kubernetes-csi/external-resizer/v2/cmd/csi-resizer"
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter"
	_ "github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller"
	_ "github.com/kubernetes-csi/livenessprobe/cmd/livenessprobe"
	_ "github.com/kubernetes-csi/node-driver-registrar/cmd/csi-node-driver-registrar"
	_ "github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-gen-kubernetes"
	_ "github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes"
	_ "github.com/topolvm/topolvm/cmd/hypertopolvm"
	_ "go.etcd.io/etcd/server/v3"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
