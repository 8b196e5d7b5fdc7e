import type { PlanAction } from "../planner/types";
import { LvmCommandError, type Runner } from "./lvm-runner";
import { executeChecked, type StepDeps } from "./step-execution";

/** lvm's answers to lvmdevices steps repeated after a crash, as lvm 2.03.16 gives them. */
const deldev: PlanAction = {
  op: "lvmdevices-deldev",
  argv: ["lvm", "lvmdevices", "--deldev", "/dev/loop3"],
  device: "/dev/loop3",
  reason: "test",
};
const failing =
  (stderr: string): Runner =>
  async (argv) => {
    throw new LvmCommandError(argv, 5, stderr);
  };
const deps = (run: Runner) =>
  ({
    run,
    discover: () => Promise.reject(new Error("not asked")),
    lvmdConfigPath: "/x",
  }) as unknown as StepDeps;

test("a deldev of a device the file does not list (lvm: No devices file entry, exit 5) is done", async () => {
  await expect(
    executeChecked(deps(failing("  No devices file entry for /dev/loop3.\n")), deldev, new Set()),
  ).resolves.toEqual({ skipped: "/dev/loop3 is not in lvm's devices file" });
});

test("any other lvmdevices failure fails the step", async () => {
  await expect(
    executeChecked(deps(failing("  Devices file not enabled.\n")), deldev, new Set()),
  ).rejects.toThrow(LvmCommandError);
  await expect(
    executeChecked(
      deps(failing("  No devices file entry for /dev/loop3.\n")),
      { ...deldev, op: "lvmdevices-adddev", argv: ["lvm", "lvmdevices", "--adddev", "/dev/loop3"] },
      new Set(),
    ),
  ).rejects.toThrow(LvmCommandError);
});
