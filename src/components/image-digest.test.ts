import * as pulumi from "@pulumi/pulumi";
import { LvmSystem, type LvmSystemArgs } from "./lvm-system";
import { crdDirectory } from "../../test/support/components/crd-fixtures";
import {
  find,
  installMocks,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";
import { DEFAULT_IMAGE } from "../version";

const DS = "kubernetes:apps/v1:DaemonSet";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const DIGEST = `sha256:${"ab".repeat(32)}`;

let crds: { dir: string; remove: () => void };
beforeAll(async () => {
  await installMocks();
  crds = crdDirectory();
});
afterAll(() => crds.remove());

async function images(name: string, extra: Partial<LvmSystemArgs>) {
  const recorded = await runProgram(() => new LvmSystem(name, { crdDirectory: crds.dir, ...extra }));
  return {
    agent: find(recorded, DS, `${name}-agent`).inputs.spec.template.spec.containers[0].image,
    operator: find(recorded, DEPLOYMENT, `${name}-operator`).inputs.spec.template.spec.containers[0].image,
  };
}

describe("agentImageDigest", () => {
  test("the agents and the operator name the image by digest (a string or an Output image); without it, by tag", async () => {
    expect(await images("tag", {})).toEqual({ agent: DEFAULT_IMAGE, operator: DEFAULT_IMAGE });
    expect(await images("pinned", { agentImageDigest: DIGEST })).toEqual({
      agent: `${DEFAULT_IMAGE}@${DIGEST}`,
      operator: `${DEFAULT_IMAGE}@${DIGEST}`,
    });
    const pushed = pulumi.output("registry.example.com/storage/pulumi-lvm:0.1.0");
    expect(await images("out", { agentImage: pushed, agentImageDigest: DIGEST })).toEqual({
      agent: `registry.example.com/storage/pulumi-lvm:0.1.0@${DIGEST}`,
      operator: `registry.example.com/storage/pulumi-lvm:0.1.0@${DIGEST}`,
    });
    // the operator's own image, when given, is used as given
    const own = await images("own", { agentImageDigest: DIGEST, operator: { image: "op:1" } });
    expect(own.operator).toBe("op:1");
  });

  test("a malformed digest, or one beside an image that already names one, is refused with its path", async () => {
    const bad = await runFailingProgram(
      () => new LvmSystem("bad", { crdDirectory: crds.dir, agentImageDigest: "sha256:xyz" }),
    );
    expect(bad.registered).toBe(0);
    expect(bad.error.message).toContain(
      'args.agentImageDigest: must be a manifest digest "sha256:<64 hex digits>" (got "sha256:xyz")',
    );
    const twice = await runFailingProgram(
      () =>
        new LvmSystem("twice", {
          crdDirectory: crds.dir,
          agentImage: `r/p@${DIGEST}`,
          agentImageDigest: DIGEST,
        }),
    );
    expect(twice.error.message).toContain(
      `args.agentImageDigest: agentImage "r/p@${DIGEST}" already names a digest`,
    );
  });
});
