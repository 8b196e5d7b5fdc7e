import type { LvmSystemArgs } from "../../../src/components/lvm-system";
import { crdDirectory } from "./crd-fixtures";
import { installMocks } from "./pulumi-mocks";

/**
 * For a test file that builds LvmSystems under Pulumi's mocks: installs the mocks and a CRD
 * directory before its tests (removed after them), and returns the args builder its tests use:
 * `agentImage`, that directory, then `extra`.
 */
export function lvmSystemUnderMocks(
  agentImage = "ghcr.io/acme/pulumi-lvm:0.1.0",
): (extra?: Partial<LvmSystemArgs>) => LvmSystemArgs {
  let crds: ReturnType<typeof crdDirectory> | undefined;
  beforeAll(async () => {
    await installMocks();
    crds = crdDirectory();
  });
  afterAll(() => crds?.remove());
  return (extra = {}) => {
    if (!crds) throw new Error("lvmSystemUnderMocks: args built before beforeAll ran");
    return { agentImage, crdDirectory: crds.dir, ...extra };
  };
}
