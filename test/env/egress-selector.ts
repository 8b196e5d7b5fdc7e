/**
 * kube-apiserver's EgressSelectorConfiguration (--egress-selector-config-file) sending its
 * "cluster" egress — every connection to a node, a pod or a Service: kubelet logs and exec,
 * admission webhooks, aggregated APIs, pods/proxy — as HTTP CONNECT over a unix socket. The test
 * tiers that stand in for a node's network (test/cluster/kubelet-proxy.ts, test/provider/pod-network.ts)
 * listen on that socket. The TCP transport is not an option: it requires mutual TLS, and with a
 * plain http URL kube-apiserver 1.37.1 fails at start.
 */
import * as fs from "node:fs";

/** Writes the configuration to `file`, naming `socketPath`; returns `file`. */
export function writeEgressSelectorConfig(file: string, socketPath: string): string {
  fs.writeFileSync(
    file,
    [
      "apiVersion: apiserver.k8s.io/v1beta1",
      "kind: EgressSelectorConfiguration",
      "egressSelections:",
      "  - name: cluster",
      "    connection:",
      "      proxyProtocol: HTTPConnect",
      "      transport:",
      "        uds:",
      `          udsName: ${socketPath}`,
      "",
    ].join("\n"),
  );
  return file;
}
