// Command pause is the sandbox ("pause") process of the real-cluster tier's pods: it holds the
// pod's namespaces, reaps orphaned children (it is PID 1 of the pod when the PID namespace is
// shared) and exits on SIGINT/SIGTERM — what registry.k8s.io/pause does, in Go because the test
// setup builds everything with Go and no image registry is reachable here. Built static
// (CGO_ENABLED=0) into the pause image by test/cluster/install.sh.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
