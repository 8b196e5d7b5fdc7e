/**
 * What TopoLVM's lvmd accepts as its configuration (lvmd.yaml), written down from TopoLVM itself
 * rather than from our planner, so the tests can check the file the agent writes against the
 * consumer: the keys of `pkg/lvmd/types.DeviceClass` / `ThinPoolConfig` (JSON tags) and the rules
 * of `internal/lvmd.ValidateDeviceClasses` (TopoLVM v0.2x):
 *
 * - at least one device class; names 1-63 characters of [A-Za-z0-9._-], starting and ending
 *   alphanumeric, unique; a non-empty volume-group; at most one default;
 * - type "", "thick" or "thin"; thin needs thin-pool with a non-empty name and an
 *   overprovision-ratio of at least 1.0;
 * - a volume group (thick) or volume-group/thin-pool (thin) target appears once;
 * - spare-gb: lvmd keeps 10 GiB of a thick class's group unused unless it is set, and subtracts it
 *   from a thin class's free space (GetFreeBytes) too.
 *
 * Unknown keys are reported too: lvmd ignores them (sigs.k8s.io/yaml is not strict), so a misspelt
 * key would silently fall back to a default.
 */

/** The keys lvmd reads, per level. */
const TOP_KEYS = ["socket-name", "device-classes", "lvcreate-option-classes"];
const CLASS_KEYS = [
  "name",
  "volume-group",
  "default",
  "spare-gb",
  "stripe",
  "stripe-size",
  "lvcreate-options",
  "type",
  "thin-pool",
];
const THIN_POOL_KEYS = ["name", "overprovision-ratio"];
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Every reason TopoLVM's lvmd would refuse (or misread) this parsed lvmd.yaml; [] when it accepts it. */
export function topolvmLvmdProblems(doc: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(doc)) return ["lvmd.yaml is not a mapping"];
  for (const k of Object.keys(doc)) if (!TOP_KEYS.includes(k)) problems.push(`unknown key ${k}`);
  if (doc["socket-name"] !== undefined && typeof doc["socket-name"] !== "string")
    problems.push("socket-name must be a string");
  const classes = doc["device-classes"];
  if (!Array.isArray(classes) || classes.length === 0) {
    problems.push("should have at least one device-class");
    return problems;
  }
  const names = new Set<string>();
  const targets = new Set<string>();
  let defaults = 0;
  classes.forEach((dc: unknown, i) => {
    const at = `device-classes[${i}]`;
    if (!isObject(dc)) return problems.push(`${at} is not a mapping`);
    for (const k of Object.keys(dc)) if (!CLASS_KEYS.includes(k)) problems.push(`${at}: unknown key ${k}`);
    const name = dc.name;
    if (typeof name !== "string" || name.length === 0)
      problems.push(`${at}: device-class name should not be empty`);
    else if (name.length > 63) problems.push(`${at}: device-class name is too long: ${name}`);
    else if (!QUALIFIED_NAME.test(name))
      problems.push(`${at}: device-class name is not a qualified name: ${name}`);
    const vg = dc["volume-group"];
    if (typeof vg !== "string" || vg.length === 0)
      problems.push(`${at}: volume group name should not be empty`);
    if (dc.default !== undefined && typeof dc.default !== "boolean")
      problems.push(`${at}: default must be a boolean`);
    if (dc.default === true) defaults++;
    if (typeof name === "string") {
      if (names.has(name)) problems.push(`${at}: duplicate device-class name: ${name}`);
      names.add(name);
    }
    if (
      dc["spare-gb"] !== undefined &&
      !(Number.isInteger(dc["spare-gb"]) && (dc["spare-gb"] as number) >= 0)
    )
      problems.push(`${at}: spare-gb must be a whole number of GiB`);
    const type = dc.type ?? "";
    if (!["", "thick", "thin"].includes(type as string))
      problems.push(`${at}: type must be thick, thin or empty (got ${JSON.stringify(type)})`);
    let target = String(vg);
    if (type === "thin") {
      const pool = dc["thin-pool"];
      if (!isObject(pool)) {
        problems.push(`${at}: device class type is thin but thinpool config is empty`);
      } else {
        for (const k of Object.keys(pool))
          if (!THIN_POOL_KEYS.includes(k)) problems.push(`${at}.thin-pool: unknown key ${k}`);
        if (typeof pool.name !== "string" || pool.name.length === 0)
          problems.push(`${at}: thinpool name should not be empty`);
        const ratio = pool["overprovision-ratio"];
        if (typeof ratio !== "number" || !(ratio >= 1))
          problems.push(`${at}: overprovision ratio should be 1.0 or more (got ${JSON.stringify(ratio)})`);
        target = `${vg}/${String(pool.name)}`;
      }
    }
    if (targets.has(target)) problems.push(`${at}: duplicate volumegroup/thinpool name: ${target}`);
    targets.add(target);
    return undefined;
  });
  if (defaults > 1) problems.push("should not have multiple default device-class");
  return problems;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
