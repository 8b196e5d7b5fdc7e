import { compareNatural, indexNode, InventoryError, joinNames } from "./node-index";
import { disk, inventory, mapper, partition } from "../../test/support/planner/testing";

test("natural order: numbers by value, whatever the input order", () => {
  const names = [
    "/dev/sdb",
    "/dev/nvme10n1",
    "/dev/sda1",
    "/dev/nvme2n1",
    "/dev/sda10",
    "/dev/sda2",
    "/dev/sda",
    "/dev/dm-0",
    "/dev/loop11",
    "/dev/loop2",
  ];
  expect([...names].sort(compareNatural)).toEqual([
    "/dev/dm-0",
    "/dev/loop2",
    "/dev/loop11",
    "/dev/nvme2n1",
    "/dev/nvme10n1",
    "/dev/sda",
    "/dev/sda1",
    "/dev/sda2",
    "/dev/sda10",
    "/dev/sdb",
  ]);
  expect(compareNatural("x01", "x1")).not.toBe(0);
});

test("the device tree from children and parent alike; every name of a device", () => {
  const inv = inventory([
    disk("sda"),
    partition("sda", 2),
    partition("sda", 1),
    mapper(0, "crypt", { parent: "/dev/sda2", mountpoints: ["/"] }),
  ]);
  const index = indexNode({
    ...inv,
    devices: inv.devices.map((d) => (d.kname === "/dev/sda" ? { ...d, children: [] } : d)),
  });
  expect(index.childrenOf("/dev/sda").map((d) => d.kname)).toEqual(["/dev/sda1", "/dev/sda2"]);
  expect(index.descendantsOf("/dev/sda").map((d) => d.kname)).toEqual([
    "/dev/sda1",
    "/dev/sda2",
    "/dev/dm-0",
  ]);
  expect(index.byName.get("/dev/mapper/crypt")?.kname).toBe("/dev/dm-0");
});

test("two devices with one kernel name are refused, naming the node", () => {
  expect(() => indexNode(inventory([disk("sdb"), disk("sdb")], { node: "n7" }))).toThrow(
    new InventoryError("n7", "two devices have the kernel name /dev/sdb"),
  );
});

test("joinNames", () => {
  expect([[], ["a"], ["a", "b"], ["a", "b", "c"]].map(joinNames)).toEqual(["", "a", "a and b", "a, b and c"]);
});
