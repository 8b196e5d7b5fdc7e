import { checkLVMNodeSet } from "../../api/validate";
import { matchesNodeSelector } from "../../planner/node-selector";
import { convertLvmCluster, type Conversion } from "./convert";

/**
 * LVMCluster shapes as LVMS documents them (its API reference and samples), written here from that
 * documentation, each with what it must become.
 */
function cluster(deviceClasses: unknown[], spec: Record<string, unknown> = {}, name = "my-lvmcluster") {
  return {
    apiVersion: "lvm.topolvm.io/v1alpha1",
    kind: "LVMCluster",
    metadata: { name },
    spec: { ...spec, storage: { deviceClasses } },
  };
}

function converted(input: unknown) {
  const c = convertLvmCluster(input);
  if (!c.ok) throw new Error(`not converted: ${JSON.stringify(c.problems)}`);
  for (const set of c.nodeSets) expect(checkLVMNodeSet(set)).toEqual({ ok: true, value: set });
  return c as Extract<Conversion, { ok: true }>;
}

const paths = (c: { notConverted: Array<{ path: string }> }) => c.notConverted.map((n) => n.path);

describe("convertLvmCluster: the shapes LVMS documents", () => {
  test("the sample: one default thin class, no selectors → one set, the same names, Retain", () => {
    const c = converted(
      cluster([
        {
          name: "vg1",
          default: true,
          fstype: "xfs",
          thinPoolConfig: { name: "thin-pool-1", sizePercent: 90, overprovisionRatio: 10 },
        },
      ]),
    );
    expect(c.nodeSets).toEqual([
      {
        apiVersion: "lvm.topolvm.io/v2alpha1",
        kind: "LVMNodeSet",
        metadata: { name: "my-lvmcluster", namespace: "lvm-system" },
        spec: {
          template: {
            volumeGroups: [
              {
                name: "vg1",
                deviceSelector: {
                  deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
                },
              },
            ],
            deviceClasses: [
              {
                name: "vg1",
                volumeGroup: "vg1",
                default: true,
                fsType: "xfs",
                strategy: "Thin",
                // LVMS's default chunkSizeCalculationPolicy is Static with 128Ki; metadata is Host's
                thin: {
                  poolName: "thin-pool-1",
                  sizePercent: 90,
                  overprovisionRatio: 10,
                  chunkSize: "128Ki",
                },
              },
            ],
            deletionPolicy: "Retain",
          },
        },
      },
    ]);
    // automatic discovery, all nodes and the cluster default are each named with the difference
    expect(paths(c)).toEqual([
      "spec.storage.deviceClasses[0].deviceSelector",
      "spec.storage.deviceClasses[0].nodeSelector",
      "spec.storage.deviceClasses[0].default",
    ]);
  });

  test("paths and optionalPaths: one path In over both; the required paths' difference named", () => {
    const c = converted(
      cluster([
        {
          name: "vg1",
          deviceSelector: {
            paths: ["/dev/disk/by-path/pci-0000:87:00.0-nvme-1"],
            optionalPaths: ["/dev/sdb", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"],
          },
          thinPoolConfig: { name: "thin-pool-1", overprovisionRatio: 5 },
        },
      ]),
    );
    const vg = c.nodeSets[0]!.spec.template.volumeGroups[0]!;
    expect(vg.deviceSelector).toEqual({
      deviceSelectorTerms: [
        {
          matchExpressions: [
            {
              key: "path",
              operator: "In",
              values: [
                "/dev/disk/by-path/pci-0000:87:00.0-nvme-1",
                "/dev/sdb",
                "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3",
              ],
            },
          ],
        },
      ],
    });
    expect(vg.forceWipeDevicesAndDestroyAllData).toBeUndefined();
    expect(c.nodeSets[0]!.spec.template.deviceClasses![0]!.thin!.sizePercent).toBe(90); // LVMS's default
    expect(paths(c)).toEqual([
      "spec.storage.deviceClasses[0].deviceSelector.paths",
      "spec.storage.deviceClasses[0].nodeSelector",
    ]);
  });

  test("forceWipeDevicesAndDestroyAllData carries over (true only)", () => {
    const wipe = (force: boolean) =>
      converted(
        cluster([
          {
            name: "vg1",
            deviceSelector: { paths: ["/dev/sdb"], forceWipeDevicesAndDestroyAllData: force },
          },
        ]),
      ).nodeSets[0]!.spec.template.volumeGroups[0]!.forceWipeDevicesAndDestroyAllData;
    expect(wipe(true)).toBe(true);
    expect(wipe(false)).toBeUndefined();
  });

  test("forceWipeDevicesAndDestroyAllData without paths is not put on the wildcard, and says why", () => {
    const c = converted(
      cluster([{ name: "vg1", deviceSelector: { forceWipeDevicesAndDestroyAllData: true } }]),
    );
    const vg = c.nodeSets[0]!.spec.template.volumeGroups[0]!;
    expect(vg.deviceSelector.deviceSelectorTerms[0]!.matchExpressions).toEqual([
      { key: "kname", operator: "Any" },
    ]);
    expect(vg.forceWipeDevicesAndDestroyAllData).toBeUndefined();
    expect(
      c.notConverted.find(
        (n) => n.path === "spec.storage.deviceClasses[0].deviceSelector.forceWipeDevicesAndDestroyAllData",
      )?.reason,
    ).toMatch(/would wipe every disk with a signature/);
  });

  test("a thin pool with every setting; Host policies leave the sizes to lvm2 and say what is ignored", () => {
    const thin = (thinPoolConfig: Record<string, unknown>) => {
      const c = converted(cluster([{ name: "vg1", thinPoolConfig }]));
      return { thin: c.nodeSets[0]!.spec.template.deviceClasses![0]!.thin, paths: paths(c) };
    };
    expect(
      thin({
        name: "pool-a",
        sizePercent: 80,
        overprovisionRatio: 20,
        chunkSizeCalculationPolicy: "Static",
        chunkSize: "256Ki",
        metadataSizeCalculationPolicy: "Static",
        metadataSize: "2Gi",
      }).thin,
    ).toEqual({
      poolName: "pool-a",
      sizePercent: 80,
      overprovisionRatio: 20,
      chunkSize: "256Ki",
      metadataSize: "2Gi",
    });
    // Static metadata without a size is LVMS's 1Gi
    expect(
      thin({ name: "p", overprovisionRatio: 1, metadataSizeCalculationPolicy: "Static" }).thin,
    ).toMatchObject({ chunkSize: "128Ki", metadataSize: "1Gi" });
    const host = thin({
      name: "p",
      sizePercent: 100,
      overprovisionRatio: 1,
      chunkSizeCalculationPolicy: "Host",
      chunkSize: "512Ki",
      metadataSize: "4Gi",
    });
    expect(host.thin).toEqual({ poolName: "p", sizePercent: 100, overprovisionRatio: 1 });
    expect(host.paths).toEqual(
      expect.arrayContaining([
        "spec.storage.deviceClasses[0].thinPoolConfig.chunkSize",
        "spec.storage.deviceClasses[0].thinPoolConfig.metadataSize",
      ]),
    );
  });

  test("no thinPoolConfig: a Thick class; raidConfig: Thick, with the lost redundancy named", () => {
    const c = converted(
      cluster([
        { name: "thick", deviceSelector: { paths: ["/dev/sdb"] }, fstype: "ext4" },
        {
          name: "mirror",
          deviceSelector: { paths: ["/dev/sdc", "/dev/sdd"] },
          raidConfig: { type: "raid1" },
        },
      ]),
    );
    expect(c.nodeSets[0]!.spec.template.deviceClasses).toEqual([
      { name: "thick", volumeGroup: "thick", fsType: "ext4", strategy: "Thick" },
      { name: "mirror", volumeGroup: "mirror", strategy: "Thick" },
    ]);
    const raid = c.notConverted.find((n) => n.path === "spec.storage.deviceClasses[1].raidConfig");
    expect(raid?.reason).toMatch(/new volumes are linear, not RAID/);
  });

  test("storageClassOptions: reclaim policy, binding mode, parameters kept; labels named", () => {
    const c = converted(
      cluster([
        {
          name: "vg1",
          thinPoolConfig: { name: "tp", overprovisionRatio: 2 },
          storageClassOptions: {
            reclaimPolicy: "Retain",
            volumeBindingMode: "Immediate",
            additionalParameters: { "topolvm.io/foo": "bar" },
            additionalLabels: { team: "db" },
          },
        },
      ]),
    );
    expect(c.nodeSets[0]!.spec.template.deviceClasses![0]!.storageClass).toEqual({
      reclaimPolicy: "Retain",
      volumeBindingMode: "Immediate",
      additionalParameters: { "topolvm.io/foo": "bar" },
    });
    expect(paths(c)).toContain("spec.storage.deviceClasses[0].storageClassOptions.additionalLabels");
  });

  test("tolerations on the LVMCluster spec, its labels and namespace: each named, none dropped unseen", () => {
    const input = cluster([{ name: "vg1", deviceSelector: { paths: ["/dev/sdb"] } }], {
      tolerations: [{ key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" }],
    });
    Object.assign(input.metadata, {
      namespace: "openshift-storage",
      labels: { app: "lvms" },
      uid: "0d3c", // server metadata: not configuration, not listed
      resourceVersion: "12",
    });
    const c = converted({ ...input, status: { state: "Ready" } });
    expect(paths(c)).toEqual(
      expect.arrayContaining(["spec.tolerations", "metadata.labels", "metadata.namespace"]),
    );
    expect(paths(c)).not.toContain("metadata.uid");
    expect(c.notConverted.find((n) => n.path === "spec.tolerations")?.reason).toMatch(/LvmSystem/);
  });

  test("unknown and unsupported fields are listed with their path; the rest is still converted", () => {
    const input = cluster([
      {
        name: "vg1",
        deviceSelector: { paths: ["/dev/sdb"], minSize: "10Gi" },
        deviceDiscoveryPolicy: "Static",
        thinPoolConfig: { name: "tp", overprovisionRatio: 2, zeroing: true },
      },
    ]);
    (input.spec as Record<string, unknown>).nodeSelector = { foo: "bar" };
    const c = converted(input);
    expect(c.nodeSets).toHaveLength(1);
    expect(paths(c)).toEqual(
      expect.arrayContaining([
        "spec.nodeSelector",
        "spec.storage.deviceClasses[0].deviceSelector.minSize",
        "spec.storage.deviceClasses[0].thinPoolConfig.zeroing",
        "spec.storage.deviceClasses[0].deviceDiscoveryPolicy",
      ]),
    );
    expect(c.notConverted.find((n) => n.path === "spec.nodeSelector")?.reason).toMatch(/not converted/);
  });

  test("what cannot be read or would not be valid is refused by path", () => {
    const bad = (input: unknown) => {
      const c = convertLvmCluster(input);
      return c.ok ? [] : c.problems.map((p) => `${p.path}: ${p.message}`);
    };
    expect(bad(cluster([{ name: "vg1", thinPoolConfig: { name: "tp" } }]))).toEqual([
      "spec.storage.deviceClasses[0].thinPoolConfig.overprovisionRatio: is required",
    ]);
    expect(bad(cluster([]))).toEqual([
      "spec.storage.deviceClasses: has no device classes: nothing to convert",
    ]);
    expect(bad({ ...cluster([{ name: "vg1" }]), apiVersion: "lvm.topolvm.io/v2alpha1" })[0]).toMatch(
      /^apiVersion: must be "lvm.topolvm.io\/v1alpha1"/,
    );
    // a thin pool name our API refuses (LVM reserves the prefix)
    expect(
      bad(cluster([{ name: "vg1", thinPoolConfig: { name: "snapshot-pool", overprovisionRatio: 2 } }])),
    ).toEqual([
      expect.stringMatching(
        /LVMNodeSet\/my-lvmcluster: spec\.template\.deviceClasses\[0\]\.thin\.poolName: must not start with "snapshot"/,
      ),
    ]);
  });
});

describe("convertLvmCluster: classes with different node selectors", () => {
  const zone = (z: string) => ({
    nodeSelectorTerms: [
      { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: [z] }] },
    ],
  });
  const nvme = {
    nodeSelectorTerms: [
      { matchExpressions: [{ key: "disk", operator: "Exists" }] },
      { matchFields: [{ key: "metadata.name", operator: "In", values: ["edge-9"] }] },
    ],
  };
  const nodes: Array<{ name: string; labels: Record<string, string> }> = ["a", "b", "c"].flatMap((z) =>
    ([{}, { disk: "nvme" }] as Array<Record<string, string>>).map((extra, i) => ({
      name: `n-${z}-${i}`,
      labels: { "topology.kubernetes.io/zone": z, ...extra },
    })),
  );
  nodes.push(
    { name: "edge-9", labels: { "topology.kubernetes.io/zone": "a" } },
    { name: "bare", labels: {} },
  );

  /** Every node is in at most one set, and that set has exactly the classes LVMS gave the node. */
  function expectSameClassesPerNode(classes: Array<{ name: string; nodeSelector?: typeof nvme }>) {
    const c = converted(cluster(classes.map((dc) => ({ ...dc, deviceSelector: { paths: ["/dev/sdb"] } }))));
    for (const node of nodes) {
      const lvms = classes
        .filter((dc) => matchesNodeSelector(dc.nodeSelector as never, node))
        .map((dc) => dc.name);
      const sets = c.nodeSets.filter((s) => matchesNodeSelector(s.spec.nodeSelector, node));
      expect({ node: node.name, sets: sets.length }).toEqual({ node: node.name, sets: lvms.length ? 1 : 0 });
      if (sets.length) expect(sets[0]!.spec.template.deviceClasses!.map((d) => d.name)).toEqual(lvms);
    }
    // each class's StorageClass is created by one set only
    const creators = c.nodeSets.flatMap((s) =>
      s.spec.template
        .deviceClasses!.filter((d) => d.storageClass?.creationPolicy !== "Never")
        .map((d) => d.name),
    );
    expect(creators.sort()).toEqual(classes.map((d) => d.name).sort());
    return c;
  }

  test("two classes in two zones: two sets, one per zone, no set for both", () => {
    const c = expectSameClassesPerNode([
      { name: "east", nodeSelector: zone("a") },
      { name: "west", nodeSelector: zone("b") },
    ]);
    expect(c.nodeSets.map((s) => [s.metadata.name, s.spec.nodeSelector])).toEqual([
      ["my-lvmcluster-east", zone("a")],
      ["my-lvmcluster-west", zone("b")],
    ]);
  });

  test("a class everywhere and one on some nodes: the overlap is a set of both, the rest a set of one", () => {
    const c = expectSameClassesPerNode([{ name: "vg1" }, { name: "fast", nodeSelector: nvme }]);
    expect(c.nodeSets.map((s) => s.metadata.name)).toEqual(["my-lvmcluster-vg1-fast", "my-lvmcluster-vg1"]);
  });

  test("three overlapping selectors, one of them shared by two classes", () => {
    expectSameClassesPerNode([
      { name: "a1", nodeSelector: zone("a") },
      { name: "fast", nodeSelector: nvme },
      { name: "a2", nodeSelector: zone("a") },
      { name: "all" },
    ]);
  });

  test("classes with the same selector stay in one set named after the LVMCluster", () => {
    const c = converted(
      cluster([
        { name: "x", nodeSelector: zone("a") },
        { name: "y", nodeSelector: zone("a") },
      ]),
    );
    expect(c.nodeSets.map((s) => [s.metadata.name, s.spec.nodeSelector])).toEqual([
      ["my-lvmcluster", zone("a")],
    ]);
  });

  test("a Gt that would have to be negated is refused with what to do; one that needs no negation is kept", () => {
    const rack = {
      nodeSelectorTerms: [{ matchExpressions: [{ key: "rack", operator: "Gt", values: ["4"] }] }],
    };
    const c = convertLvmCluster(cluster([{ name: "vg1" }, { name: "big", nodeSelector: rack }]));
    expect(c.ok ? [] : c.problems).toEqual([
      {
        path: "spec.storage.deviceClasses[1].nodeSelector",
        message: expect.stringMatching(
          /Gt or Lt, which cannot be negated exactly .* exclude each other with In\/NotIn/,
        ),
      },
    ]);
    // the same selector on every class: one set, nothing to negate
    const same = converted(
      cluster([
        { name: "vg1", nodeSelector: rack },
        { name: "big", nodeSelector: rack },
      ]),
    );
    expect(same.nodeSets.map((s) => s.spec.nodeSelector)).toEqual([rack]);
  });

  test("node selectors are checked as our API checks them, by path", () => {
    const c = convertLvmCluster(
      cluster([
        {
          name: "vg1",
          nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: "a", operator: "Near" }] }] },
        },
      ]),
    );
    expect(c.ok ? [] : c.problems.map((p) => p.path)).toEqual([
      "spec.storage.deviceClasses[0].nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator",
    ]);
  });
});
