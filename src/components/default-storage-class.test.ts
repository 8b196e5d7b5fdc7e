import { ValidationError } from "../api";
import { NodeSet } from "./node-set";
import {
  find,
  installMocks,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";

/** NodeSet's defaultStorageClass (and DeviceClass's clusterDefault): the cluster default, as LVMS marks it. */
jest.setTimeout(60_000);
beforeAll(() => installMocks());

const SC = "kubernetes:storage.k8s.io/v1:StorageClass";
const disks = {
  deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: ["vdb"] }] }],
};
const template = (classes: object[]) => ({
  volumeGroups: [
    { name: "vg-data", deviceSelector: disks },
    { name: "vg-bulk", deviceSelector: disks },
  ],
  deviceClasses: classes,
});
const fast = { name: "fast", strategy: "Thick", volumeGroup: "vg-data", default: true };
const slow = { name: "slow", strategy: "Thick", volumeGroup: "vg-bulk" };

test("only the default device class's StorageClass carries the annotation, and only when asked", async () => {
  const marked = await runProgram(
    () => new NodeSet("edge", { template: template([fast, slow]), defaultStorageClass: true } as never),
  );
  expect(find(marked, SC, "edge-fast-storage-class").inputs.metadata.annotations).toEqual({
    "storageclass.kubernetes.io/is-default-class": "true",
  });
  expect(find(marked, SC, "edge-slow-storage-class").inputs.metadata.annotations).toBeUndefined();
  const unmarked = await runProgram(() => new NodeSet("edge", { template: template([fast, slow]) } as never));
  expect(find(unmarked, SC, "edge-fast-storage-class").inputs.metadata.annotations).toBeUndefined();
});

test.each([
  ["no default class", [slow], "is true, but no device class of the template is the default"],
  [
    "a default class without a StorageClass",
    [{ ...fast, storageClass: { creationPolicy: "Never" } }],
    'is true, but the default device class "fast" creates no StorageClass (storageClass.creationPolicy Never)',
  ],
])("refused: %s", async (_, classes, message) => {
  const { error, registered } = await runFailingProgram(
    () => new NodeSet("edge", { template: template(classes), defaultStorageClass: true } as never),
  );
  expect(error).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).problems).toEqual([{ path: "args.defaultStorageClass", message }]);
  expect(registered).toBe(0);
});
