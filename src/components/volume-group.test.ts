import * as pulumi from "@pulumi/pulumi";
import { VolumeGroup } from "./volume-group";
import { installMocks, runFailingProgram, runProgram } from "../../test/support/components/pulumi-mocks";

beforeAll(installMocks);

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

const bySerial = {
  deviceSelectorTerms: [{ matchExpressions: [{ key: "serial", operator: "In", values: ["SN-AAA111"] }] }],
};

describe("VolumeGroup", () => {
  test("is a component without cluster objects, whose outputs say what the group does", async () => {
    let vg: VolumeGroup | undefined;
    const recorded = await runProgram(
      () =>
        (vg = new VolumeGroup("edge-vg-data", {
          volumeGroup: { name: "vg-data", deviceSelector: bySerial },
        })),
    );
    expect(recorded.map((r) => [r.type, r.name])).toEqual([["pulumi-lvm:index:VolumeGroup", "edge-vg-data"]]);
    expect(await outputOf(vg!.volumeGroupName)).toBe("vg-data");
    expect(await outputOf(vg!.minDeviceSize)).toBe("1Gi");
    expect(await outputOf(vg!.wildcard)).toBe(false);
    expect(await outputOf(vg!.wipesDevices)).toBe(false);
  });

  test("a wildcard group that wipes, with its own minimum size", async () => {
    let vg: VolumeGroup | undefined;
    await runProgram(
      () =>
        (vg = new VolumeGroup("edge-scratch", {
          volumeGroup: {
            name: "scratch",
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
            },
            minDeviceSize: "100Gi",
            forceWipeDevicesAndDestroyAllData: true,
          },
        })),
    );
    expect(await outputOf(vg!.wildcard)).toBe(true);
    expect(await outputOf(vg!.wipesDevices)).toBe(true);
    expect(await outputOf(vg!.minDeviceSize)).toBe("100Gi");
  });

  test("validates with the API's schema", async () => {
    const { error, registered } = await runFailingProgram(
      () =>
        new VolumeGroup("edge-vg", {
          volumeGroup: {
            name: "VG",
            deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [] }] },
            minDeviceSize: "ten",
          },
        }),
    );
    expect(error.message).toBe(
      [
        'VolumeGroup "edge-vg" is invalid:',
        `  args.volumeGroup.name: must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "VG")`,
        "  args.volumeGroup.deviceSelector.deviceSelectorTerms[0].matchExpressions: a device selector term needs at least one expression (an empty term would match every disk)",
        '  args.volumeGroup.minDeviceSize: must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "ten")',
      ].join("\n"),
    );
    expect(registered).toBe(0);
  });
});
