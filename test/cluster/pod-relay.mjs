/**
 * The guest half of the apiserver's way to the pod network (test/cluster/kubelet-proxy.ts is the
 * host half): an HTTP CONNECT relay the cluster node runs with the host's node (shared over 9p), on
 * one guest port that qemu forwards. It dials `<pod IP>:<port>` for targets inside the node's pod
 * CIDR and refuses everything else (hostnames too: the apiserver dials pods by IP), so the forwarded
 * port opens the pod network and nothing more: not the node's own ports, not the host, not Services.
 *
 *   node pod-relay.mjs <listen address:port> <pod CIDR>      # e.g. 0.0.0.0:10998 10.244.0.0/24
 *
 * Prints one JSON line {"listening": <port>} when it accepts connections. Plain .mjs, no imports
 * beyond node's own: it starts in seconds under TCG, where tsx's compile takes minutes.
 */
import * as http from "node:http";
import * as net from "node:net";

/** The IPv4 address as a 32-bit number, or undefined if `s` is not a dotted quad. */
function ipv4(s) {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** Whether `host` is an IPv4 address inside `cidr` ("a.b.c.d/n"). */
function inCidr(host, cidr) {
  const [base, bits] = cidr.split("/");
  const b = ipv4(base ?? "");
  const n = Number(bits);
  const a = ipv4(host);
  if (a === undefined || b === undefined || !Number.isInteger(n) || n < 0 || n > 32) return false;
  const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

/** `host:port` of a CONNECT request's target, or undefined. */
function target(url) {
  const m = /^([^:[\]]+):(\d{1,5})$/.exec(url ?? "");
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return undefined;
  return { host: m[1], port: Number(m[2]) };
}

function main() {
  const [listen, cidr] = process.argv.slice(2);
  const at = /^(.+):(\d+)$/.exec(listen ?? "");
  if (!at || ipv4(cidr?.split("/")[0] ?? "") === undefined) {
    process.stderr.write("usage: node pod-relay.mjs <listen address:port> <pod CIDR a.b.c.d/n>\n");
    process.exit(2);
  }
  const server = http.createServer((_req, res) => {
    res.writeHead(405, { "content-type": "text/plain" });
    res.end(`only CONNECT to ${cidr} is relayed here\n`);
  });
  server.on("connect", (req, client, head) => {
    const t = target(req.url);
    if (!t || !inCidr(t.host, cidr)) {
      process.stdout.write(`${JSON.stringify({ refused: req.url })}\n`);
      client.end(`HTTP/1.1 403 Forbidden\r\n\r\n${req.url} is not in the pod network ${cidr}\n`);
      return;
    }
    let established = false;
    const upstream = net.connect(t.port, t.host, () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (e) => {
      // Before the tunnel is up the client still waits for a status line; after, only a close.
      if (!established) client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\n${req.url}: ${e.message}\n`);
      else client.destroy();
    });
    client.on("error", () => upstream.destroy());
  });
  server.listen(Number(at[2]), at[1], () => {
    process.stdout.write(`${JSON.stringify({ listening: server.address().port })}\n`);
  });
}

main();
