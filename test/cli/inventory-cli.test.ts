/**
 * `pulumi-lvm inventory` then `pulumi-lvm plan`, as real processes on real loop devices: record a
 * node's disks, plan a node set against the recording, and see which disk it would claim and which
 * it leaves out and why — with nothing on the disks changed by either command. Needs root, losetup
 * and lvm2 (test/setup.sh); fails loudly without them.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pvs, requireHostTier, Scratch } from "../agent/harness";

const ROOT = path.join(__dirname, "..", "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const MAIN = path.join(ROOT, "src", "cli", "main.ts");

jest.setTimeout(60_000);

function cli(...args: string[]) {
  const r = spawnSync(TSX, [MAIN, ...args], { cwd: ROOT, encoding: "utf8", timeout: 50_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Everything a device's first MiB holds, to show the commands wrote nothing. */
function head(dev: string): string {
  return execFileSync("sh", ["-c", `head -c 1048576 ${dev} | sha256sum`], { encoding: "utf8" });
}

let scratch: Scratch;
let blank: string;
let ext4: string;

beforeAll(() => {
  requireHostTier();
  scratch = new Scratch("inventory-cli");
  // sparse; above the default minimum device size (1Gi)
  blank = scratch.loop(1100);
  ext4 = scratch.loop(1100);
  execFileSync("mkfs.ext4", ["-q", "-F", ext4], { stdio: "ignore" });
});
afterAll(() => scratch?.cleanup());

test("records a node's disks, and plan on the recording claims the blank one and says why not the other", () => {
  const before = [head(blank), head(ext4)];
  const recorded = cli(
    "inventory",
    "--node",
    "it-node",
    "--label",
    "zone=it",
    "--device",
    blank,
    "--device",
    ext4,
  );
  // stderr is progress only: what is read, each (reading) command that ran, a summary
  const progress = recorded.stderr.trimEnd().split("\n");
  expect(progress[0]).toBe(
    `pulumi-lvm inventory: node "it-node": reading ${blank}, ${ext4} (nothing is written)`,
  );
  expect(progress).toContainEqual(expect.stringMatching(/^pulumi-lvm inventory: lsblk .*: exit 0, \d+ ms$/));
  expect(progress).toContainEqual(
    expect.stringMatching(/^pulumi-lvm inventory: lvm fullreport .*: exit 0, \d+ ms$/),
  );
  expect(progress.at(-1)).toMatch(
    /^pulumi-lvm inventory: node "it-node": done in [\d.]+ s; 2 devices probed$/,
  );
  for (const line of progress) expect(line).toMatch(/^pulumi-lvm inventory: /);
  expect(recorded.code).toBe(0);
  const inventory = JSON.parse(recorded.stdout) as {
    nodes: Array<{ name: string; labels: Record<string, string>; probed: string[] }>;
  };
  expect(inventory.nodes).toHaveLength(1);
  expect(inventory.nodes[0]).toMatchObject({ name: "it-node", labels: { zone: "it" } });
  expect([...inventory.nodes[0]!.probed].sort()).toEqual([blank, ext4].sort());

  const inventoryFile = scratch.path("inventory.json");
  fs.writeFileSync(inventoryFile, recorded.stdout);
  const nodeSetFile = scratch.path("nodeset.yaml");
  fs.writeFileSync(
    nodeSetFile,
    `apiVersion: lvm.topolvm.io/v2alpha1
kind: LVMNodeSet
metadata: {name: it}
spec:
  nodeSelector:
    nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [it]}]}]
  template:
    volumeGroups:
      - name: vg-it
        deviceSelector:
          deviceSelectorTerms: [{matchExpressions: [{key: kname, operator: In, values: [${blank}, ${ext4}]}]}]
`,
  );
  const planned = cli("plan", "--inventory", inventoryFile, "--nodeset", nodeSetFile, "--json");
  expect(planned.stderr).toBe("");
  expect(planned.code).toBe(0);
  const doc = JSON.parse(planned.stdout) as {
    nodes: Array<{
      node: string;
      volumeGroups: Array<{
        name: string;
        claimed: Array<{ kname: string }>;
        excluded: Array<{ kname: string; reasons: string[] }>;
      }>;
    }>;
  };
  const vg = doc.nodes.find((n) => n.node === "it-node")!.volumeGroups.find((v) => v.name === "vg-it")!;
  expect(vg.claimed.map((d) => d.kname)).toEqual([blank]);
  expect(vg.excluded).toEqual([{ kname: ext4, reasons: [expect.stringContaining("ext4")] }]);

  // -o text: the same disks as a table, what is on each
  const table = cli(
    "inventory",
    "--node",
    "it-node",
    "-q",
    "-o",
    "text",
    "--device",
    blank,
    "--device",
    ext4,
  );
  expect(table).toMatchObject({ code: 0, stderr: "" });
  expect(table.stdout).toMatch(new RegExp(`\n${blank} +loop +1\\.1Gi +-\n`));
  expect(table.stdout).toMatch(new RegExp(`\n${ext4} +loop +1\\.1Gi +ext4\n`));

  // neither command wrote anything
  expect([head(blank), head(ext4)]).toEqual(before);
  expect(pvs([blank, ext4])).toEqual([]);
});

test("without lvm2 (hidden from this process alone, in its own mount namespace): exit 1 saying how to install it", () => {
  // /usr/sbin, in a private mount namespace, as itself without lvm and its links: the runner's PATH
  // finds no lvm, as on a machine where lvm2 is not installed. Nothing outside the namespace changes.
  const orig = scratch.path("usr-sbin");
  fs.mkdirSync(orig);
  const script = `set -e
mount --bind /usr/sbin ${orig}
mount -t tmpfs tmpfs /usr/sbin
for f in ${orig}/*; do b=$(basename "$f"); case "$b" in lvm*) ;; *) ln -s "$f" "/usr/sbin/$b" ;; esac; done
exec "$@"`;
  const r = spawnSync(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      script,
      "sh",
      TSX,
      MAIN,
      "inventory",
      "--node",
      "it-node",
      "--device",
      blank,
    ],
    { cwd: ROOT, encoding: "utf8", timeout: 50_000 },
  );
  if (r.error) throw r.error;
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  // the reading commands before it, then our words; lvm's run did not start (it used to say "killed")
  expect(lines).toContainEqual(
    expect.stringMatching(/^pulumi-lvm inventory: lvm fullreport .*: did not start, \d+ ms$/),
  );
  expect(lines.at(-1)).toBe(
    'pulumi-lvm inventory: node "it-node": lvm2 is not installed: apt-get install lvm2 / dnf install lvm2',
  );
  expect(r.status).toBe(1);
  expect(fs.existsSync("/usr/sbin/lvm")).toBe(true);
});
