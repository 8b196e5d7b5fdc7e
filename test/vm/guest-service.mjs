// @ts-check
/**
 * The command service of the real-kernel test guest: a tiny HTTP server that the guest's init
 * (test/vm/guest-init.sh) starts with the host's /usr/bin/node inside the chroot. Host tests reach it
 * through a qemu user-networking port forward (test/vm/guest.ts) to run verification commands in the
 * guest, independently of the agent under test.
 *
 * Commands are argv arrays, never shell strings. Every request but GET /health needs
 * "Authorization: Bearer <token>" (the token is in job.json, written by the host per guest).
 *
 *   GET  /health                    → { ok, hostname, kernel, uptimeS }
 *   POST /exec  { argv, env?, cwd?, timeoutMs?, stdin?, encoding? }
 *                                   → { code, signal, stdout, stderr, durationMs, timedOut, error? }
 *   POST /spawn { argv, env?, cwd?, logFile? }  → { pid, logFile }   (runs in the background)
 *   GET  /processes                 → [{ pid, argv, logFile, exitCode, signal }]
 *   POST /kill  { pid, signal? }    → { ok }
 *   POST /shutdown                  → { ok }; stops background processes, then exits (the init then
 *                                     unmounts everything and powers the guest off)
 *
 * Plain ES module with node: imports only, so that it starts fast under TCG and needs no build.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Buffer } from "node:buffer";
import { clearTimeout, setTimeout } from "node:timers";

const MAX_OUTPUT = 64 * 1024 * 1024;
const LOG_DIR = "/var/log/pl-vm";

const jobFile = process.argv[2];
if (!jobFile) throw new Error("usage: guest-service.mjs <job.json>");
/** @type {{ token: string, port: number }} */
const job = JSON.parse(fs.readFileSync(jobFile, "utf8"));

/** @param {string} msg */
const log = (msg) => process.stdout.write(`pl-svc: [${os.uptime().toFixed(1)}s] ${msg}\n`);

/** @type {Map<number, { pid: number, argv: string[], logFile: string, exitCode: number | null, signal: string | null, child: import("node:child_process").ChildProcess }>} */
const background = new Map();

class BadRequest extends Error {}

/** @param {unknown} body */
function parseCommand(body) {
  const b = /** @type {Record<string, unknown>} */ (body ?? {});
  const argv = b.argv;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string")) {
    throw new BadRequest("argv must be a non-empty array of strings");
  }
  const env = b.env ?? {};
  if (typeof env !== "object" || Object.values(env).some((v) => typeof v !== "string")) {
    throw new BadRequest("env must be an object of strings");
  }
  if (b.cwd !== undefined && typeof b.cwd !== "string") throw new BadRequest("cwd must be a string");
  return {
    argv: /** @type {string[]} */ (argv),
    env: { ...process.env, .../** @type {Record<string, string>} */ (env) },
    cwd: /** @type {string | undefined} */ (b.cwd),
  };
}

/** @param {unknown} body */
function exec(body) {
  const { argv, env, cwd } = parseCommand(body);
  const b = /** @type {Record<string, unknown>} */ (body);
  const timeoutMs = typeof b.timeoutMs === "number" ? b.timeoutMs : 60_000;
  const encoding = b.encoding === "base64" ? "base64" : "utf8";
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { env, cwd, detached: true, stdio: "pipe" });
    /** @type {Buffer[]} */ const out = [];
    /** @type {Buffer[]} */ const err = [];
    let size = 0;
    let timedOut = false;
    /** @type {string | undefined} */ let error;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const collect = (/** @type {Buffer[]} */ into) => (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) {
        error = `output larger than ${MAX_OUTPUT} bytes`;
        kill();
      } else into.push(chunk);
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    let notStarted = false;
    child.on("error", (e) => {
      error = e.message;
      notStarted = child.pid === undefined;
    });
    child.stdin.on("error", () => {});
    if (typeof b.stdin === "string") child.stdin.end(b.stdin);
    else child.stdin.end();
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const durationMs = Date.now() - started;
      log(
        `exec ${JSON.stringify(argv)} → ${code ?? signal} in ${durationMs} ms${timedOut ? " (timed out)" : ""}`,
      );
      resolve({
        code: notStarted ? 127 : code,
        signal,
        stdout: Buffer.concat(out).toString(encoding),
        stderr: Buffer.concat(err).toString(encoding) + (error ? `${error}\n` : ""),
        durationMs,
        timedOut,
        ...(error ? { error } : {}),
      });
    });
  });
}

/** @param {unknown} body */
function startBackground(body) {
  const { argv, env, cwd } = parseCommand(body);
  const b = /** @type {Record<string, unknown>} */ (body);
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const name = path.basename(argv[0]).replace(/[^A-Za-z0-9._-]/g, "_");
  const logFile = typeof b.logFile === "string" ? b.logFile : path.join(LOG_DIR, `${name}-${Date.now()}.log`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = fs.openSync(logFile, "a");
  const child = spawn(argv[0], argv.slice(1), { env, cwd, detached: true, stdio: ["ignore", fd, fd] });
  fs.closeSync(fd);
  return new Promise((resolve, reject) => {
    child.once("error", (e) => reject(new BadRequest(`cannot start ${argv[0]}: ${e.message}`)));
    child.once("spawn", () => {
      const pid = /** @type {number} */ (child.pid);
      const entry = { pid, argv, logFile, exitCode: null, signal: null, child };
      background.set(pid, entry);
      child.on("exit", (code, signal) => {
        entry.exitCode = code;
        entry.signal = signal;
        log(`background ${pid} ${JSON.stringify(argv)} exited: ${code ?? signal}`);
      });
      log(`background ${pid} ${JSON.stringify(argv)} → ${logFile}`);
      resolve({ pid, logFile });
    });
  });
}

/** @param {unknown} body */
function killBackground(body) {
  const b = /** @type {Record<string, unknown>} */ (body ?? {});
  const entry = typeof b.pid === "number" ? background.get(b.pid) : undefined;
  if (!entry) throw new BadRequest(`no background process with pid ${String(b.pid)}`);
  const signal = typeof b.signal === "string" ? b.signal : "SIGTERM";
  try {
    process.kill(-entry.pid, /** @type {NodeJS.Signals} */ (signal));
  } catch {
    /* already gone */
  }
  return { ok: true };
}

async function stopBackground() {
  const running = [...background.values()].filter((e) => e.exitCode === null && e.signal === null);
  for (const e of running) {
    try {
      process.kill(-e.pid, "SIGTERM");
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + 5000;
  while (running.some((e) => e.exitCode === null && e.signal === null) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const e of running) {
    try {
      process.kill(-e.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

/** @param {http.IncomingMessage} req */
function readJson(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */ const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch {
        reject(new BadRequest("body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

const server = http.createServer(async (req, res) => {
  const reply = (/** @type {number} */ status, /** @type {unknown} */ value) => {
    const text = JSON.stringify(value);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  try {
    const route = `${req.method} ${req.url}`;
    if (route === "GET /health") {
      return reply(200, { ok: true, hostname: os.hostname(), kernel: os.release(), uptimeS: os.uptime() });
    }
    if (req.headers.authorization !== `Bearer ${job.token}`) return reply(401, { error: "bad token" });
    const body = req.method === "POST" ? await readJson(req) : undefined;
    switch (route) {
      case "POST /exec":
        return reply(200, await exec(body));
      case "POST /spawn":
        return reply(200, await startBackground(body));
      case "GET /processes":
        return reply(
          200,
          [...background.values()].map(({ child: _child, ...rest }) => rest),
        );
      case "POST /kill":
        return reply(200, killBackground(body));
      case "POST /shutdown":
        reply(200, { ok: true });
        log("shutdown requested");
        await stopBackground();
        server.close();
        setTimeout(() => process.exit(0), 100);
        return;
      default:
        return reply(404, { error: `no route ${route}` });
    }
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return reply(e instanceof BadRequest ? 400 : 500, { error: message });
  }
});
server.keepAliveTimeout = 1000;
server.listen(job.port, "0.0.0.0", () => log(`PL-SERVICE-READY on port ${job.port}`));
