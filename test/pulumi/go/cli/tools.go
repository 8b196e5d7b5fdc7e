//go:build tools

// Package tools pins the command that test/pulumi/install.sh builds with
// `go build -o <cache>/bin/pulumi <package path>`. The build tag keeps this file out of every
// build; `go mod tidy` still sees the import and keeps its requirements.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
)
