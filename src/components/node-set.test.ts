import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ValidationError } from "../api";
import { LvmSystem } from "./lvm-system";
import { NodeSet, NODE_SET_TYPE, type NodeSetArgs } from "./node-set";
import { edgeArgs } from "../../test/support/components/fixtures";
import {
  find,
  installMocks,
  ofType,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";

const CR = "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet";
const SC = "kubernetes:storage.k8s.io/v1:StorageClass";
const VSC = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass";
const DISKS = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";

beforeAll(installMocks);

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

describe("NodeSet", () => {
  test("registers the LVMNodeSet, a VolumeGroup per group and a DeviceClass per class, named after it", async () => {
    const recorded = await runProgram(() => new NodeSet("edge", edgeArgs()));
    expect(recorded.map((r) => [r.type, r.name, r.parent?.name])).toEqual([
      [NODE_SET_TYPE, "edge", undefined],
      [CR, "edge", "edge"],
      ["pulumi-lvm:index:VolumeGroup", "edge-vg-data", "edge"],
      ["pulumi-lvm:index:DeviceClass", "edge-fast", "edge"],
      [SC, "edge-fast-storage-class", "edge-fast"],
      [VSC, "edge-fast-snapshot-class", "edge-fast"],
      ["pulumi-lvm:index:DeviceClass", "edge-bulk", "edge"],
      [SC, "edge-bulk-storage-class", "edge-bulk"],
    ]);
  });

  test("the custom resource carries the validated spec in the system namespace", async () => {
    const args = edgeArgs();
    const cr = find(
      await runProgram(() => new NodeSet("edge", { ...args, labels: { team: "platform" } })),
      CR,
      "edge",
    );
    expect(cr.inputs).toEqual({
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: {
        name: "edge",
        namespace: "lvm-system",
        labels: { team: "platform" },
        annotations: {
          // its DeviceClasses make the StorageClasses: the operator leaves them alone (issue 17)
          "lvm.topolvm.io/device-class-objects": "pulumi",
          // up waits until the operator built every node (and its dependents, TopoLVM's lvmd, with it)
          "pulumi.com/waitFor": "condition=LVMNodesReady",
          "pulumi.com/timeoutSeconds": "600",
        },
      },
      spec: { nodeSelector: args.nodeSelector, template: args.template },
    });
  });

  test("no labels: the custom resource declares no empty labels map", async () => {
    // The API server drops an empty map, so the real Kubernetes provider would show `+ labels: {}`
    // as a change on every preview (found by test/pulumi/kubernetes-e2e.test.ts).
    for (const labels of [undefined, {}]) {
      const cr = find(await runProgram(() => new NodeSet("edge", { ...edgeArgs(), labels })), CR, "edge");
      expect(cr.inputs.metadata).toEqual({
        name: "edge",
        namespace: "lvm-system",
        annotations: expect.objectContaining({ "lvm.topolvm.io/device-class-objects": "pulumi" }),
      });
      expect(Object.keys(cr.inputs.metadata)).not.toContain("labels");
    }
  });

  describe("awaitNodesReady: up waits for the set's LVMNodesReady condition", () => {
    const awaitOf = async (args: NodeSetArgs) => {
      const cr = find(await runProgram(() => new NodeSet("edge", args)), CR, "edge");
      const a = cr.inputs.metadata.annotations as Record<string, string>;
      return [a["pulumi.com/waitFor"], a["pulumi.com/timeoutSeconds"]];
    };
    const agents = { "node-a": { url: "http://127.0.0.1:9443", token: "t" } };

    test("by default in operator mode, for 600 s; readyTimeoutSeconds sets the limit", async () => {
      expect(await awaitOf(edgeArgs())).toEqual(["condition=LVMNodesReady", "600"]);
      expect(await awaitOf({ ...edgeArgs(), readyTimeoutSeconds: 1800 })).toEqual([
        "condition=LVMNodesReady",
        "1800",
      ]);
    });

    test("awaitNodesReady false: no await annotations at all", async () => {
      expect(await awaitOf({ ...edgeArgs(), awaitNodesReady: false })).toEqual([undefined, undefined]);
    });

    test("sandbox mode (agents) does not wait unless asked: Pulumi applied the disks, no operator need run", async () => {
      expect(await awaitOf({ ...edgeArgs(), agents })).toEqual([undefined, undefined]);
      expect(await awaitOf({ ...edgeArgs(), agents, awaitNodesReady: true })).toEqual([
        "condition=LVMNodesReady",
        "600",
      ]);
    });

    test("a timeout that is not a positive whole number, or one with awaitNodesReady false, is refused by path", async () => {
      for (const [extra, message] of [
        [{ readyTimeoutSeconds: 0 }, "  args.readyTimeoutSeconds: "],
        [{ readyTimeoutSeconds: 1.5 }, "  args.readyTimeoutSeconds: "],
        [
          { awaitNodesReady: false, readyTimeoutSeconds: 60 },
          "  args.readyTimeoutSeconds: is set, but awaitNodesReady is false: up does not wait for the nodes",
        ],
      ] as const) {
        const { error, registered } = await runFailingProgram(
          () => new NodeSet("edge", { ...edgeArgs(), ...extra }),
        );
        expect(error).toBeInstanceOf(ValidationError);
        expect(error.message).toContain(message);
        expect(registered).toBe(0);
      }
    });
  });

  test("nodeSetName and namespace override the defaults", async () => {
    const recorded = await runProgram(
      () => new NodeSet("edge", { ...edgeArgs(), nodeSetName: "zone-a.edge", namespace: "storage" }),
    );
    expect(find(recorded, CR, "edge").inputs.metadata).toMatchObject({
      name: "zone-a.edge",
      namespace: "storage",
    });
  });

  test("outputs the StorageClass and VolumeSnapshotClass names by device class", async () => {
    let nodeSet: NodeSet | undefined;
    await runProgram(() => (nodeSet = new NodeSet("edge", edgeArgs())));
    expect(await outputOf(nodeSet!.storageClassNames)).toEqual({ fast: "lvms-fast", bulk: "lvms-bulk" });
    expect(await outputOf(nodeSet!.snapshotClassNames)).toEqual({ fast: "lvms-fast" });
    expect(await outputOf(nodeSet!.nodeSetName)).toBe("edge");
    expect(await outputOf(nodeSet!.namespace)).toBe("lvm-system");
    expect(await outputOf(nodeSet!.nodes)).toEqual({});
  });

  test("children wait for what the node set depends on", async () => {
    let crds: k8s.core.v1.Namespace | undefined;
    const recorded = await runProgram(() => {
      crds = new k8s.core.v1.Namespace("crds-ready", {});
      return new NodeSet("edge", edgeArgs(), { dependsOn: [crds] });
    });
    expect(find(recorded, CR, "edge").opts.dependsOn).toEqual([crds]);
    expect(find(recorded, "pulumi-lvm:index:DeviceClass", "edge-fast").opts.dependsOn).toEqual([crds]);
    expect(find(recorded, SC, "edge-fast-storage-class").opts.dependsOn).toEqual([crds]);
  });

  describe("sandbox mode (agents)", () => {
    const agents = { "node-a": { url: "http://127.0.0.1:9443", token: "token-for-node-a-0001" } };

    test("adds the NodeSetDisks resource with the spec and the agents, tokens as secrets", async () => {
      const recorded = await runProgram(() => new NodeSet("edge", { ...edgeArgs(), agents }));
      const disks = find(recorded, DISKS, "edge-disks");
      expect(disks.parent).toEqual({ type: NODE_SET_TYPE, name: "edge" });
      expect(disks.inputs).toMatchObject({
        nodeSetName: "edge",
        namespace: "lvm-system",
        spec: edgeArgs().template,
      });
      // The engine receives the agents as a secret (Pulumi's wire format for secret values).
      expect(disks.inputs.agents).toEqual({
        [pulumi.runtime.specialSigKey]: pulumi.runtime.specialSecretSig,
        value: { "node-a": { url: "http://127.0.0.1:9443", token: "token-for-node-a-0001" } },
      });
      expect(await pulumi.isSecret(disks.props.agents["node-a"].token)).toBe(true);
      expect(disks.opts.additionalSecretOutputs).toContain("agents");
      expect(typeof disks.inputs.__provider).toBe("string");
    });

    test("the LVMNodeSet changes only after the disks did (the operator must not race Pulumi's apply)", async () => {
      const recorded = await runProgram(() => new NodeSet("edge", { ...edgeArgs(), agents }));
      expect(find(recorded, CR, "edge").opts.dependsOn).toEqual([
        find(recorded, DISKS, "edge-disks").resource,
      ]);
      const clustered = await runProgram(
        () => new NodeSet("edge", { ...edgeArgs(), cluster: { kubeconfig: "k", serviceAccountName: "sa" } }),
      );
      expect(find(clustered, CR, "edge").opts.dependsOn).toEqual([
        find(clustered, DISKS, "edge-disks").resource,
      ]);
    });

    test("without agents there is no NodeSetDisks", async () => {
      expect(ofType(await runProgram(() => new NodeSet("edge", edgeArgs())), DISKS)).toEqual([]);
    });
  });

  describe("approvals", () => {
    const PATCH = "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodePatch";
    const H1 = "a".repeat(64);
    const H2 = "0123456789abcdef".repeat(4);

    test("one server-side apply patch per node setting lvm.topolvm.io/approve to its hash, in node order, not behind the LVMNodeSet", async () => {
      const recorded = await runProgram(
        () => new NodeSet("edge", { ...edgeArgs(), approvals: { "worker-3": H2, "worker-1": H1 } }),
      );
      const patches = ofType(recorded, PATCH);
      expect(patches.map((p) => [p.name, p.parent?.name, p.inputs])).toEqual([
        [
          "edge-approve-worker-1",
          "edge",
          {
            apiVersion: "lvm.topolvm.io/v2alpha1",
            kind: "LVMNode",
            metadata: {
              name: "worker-1",
              namespace: "lvm-system",
              annotations: { "lvm.topolvm.io/approve": H1 },
            },
          },
        ],
        [
          "edge-approve-worker-3",
          "edge",
          {
            apiVersion: "lvm.topolvm.io/v2alpha1",
            kind: "LVMNode",
            metadata: {
              name: "worker-3",
              namespace: "lvm-system",
              annotations: { "lvm.topolvm.io/approve": H2 },
            },
          },
        ],
      ]);
      // The set's await (LVMNodesReady) cannot end while a plan waits: an approval behind it never comes.
      const set = find(recorded, CR, "edge").resource;
      for (const p of patches) expect(p.opts.dependsOn ?? []).not.toContain(set);
    });

    test("none given, or an empty map: no patch", async () => {
      for (const approvals of [undefined, {}])
        expect(
          ofType(await runProgram(() => new NodeSet("edge", { ...edgeArgs(), approvals })), PATCH),
        ).toEqual([]);
    });

    test("a hash that is not one, a name that is not a node's, or approvals in sandbox mode: refused by path, nothing registered", async () => {
      const refused = async (args: NodeSetArgs) => {
        const { error, registered } = await runFailingProgram(() => new NodeSet("edge", args));
        expect(error).toBeInstanceOf(ValidationError);
        expect(registered).toBe(0);
        return error.message;
      };
      expect(await refused({ ...edgeArgs(), approvals: { "worker-1": "738ce1b7" } })).toContain(
        "args.approvals.worker-1: must be a plan's hash: 64 lower-case hex digits",
      );
      expect(await refused({ ...edgeArgs(), approvals: { Worker_1: H1 } })).toContain(
        "args.approvals.Worker_1: is not a node name",
      );
      const agents = { "node-a": { url: "http://127.0.0.1:9443", token: "token-for-node-a-0001" } };
      expect(await refused({ ...edgeArgs(), agents, approvals: { "node-a": H1 } })).toContain(
        "args.approvals: cannot be used with agents",
      );
    });
  });

  describe("cluster mode (cluster)", () => {
    const cluster = { kubeconfig: "apiVersion: v1\nkind: Config\n", serviceAccountName: "lvm-provisioner" };

    test("adds the NodeSetDisks resource with the cluster settings and the node set's selector, the kubeconfig a secret", async () => {
      const recorded = await runProgram(
        () => new NodeSet("edge", { ...edgeArgs(), cluster: { ...cluster, context: "prod" } }),
      );
      const disks = find(recorded, DISKS, "edge-disks");
      expect(disks.parent).toEqual({ type: NODE_SET_TYPE, name: "edge" });
      expect(disks.inputs).toMatchObject({
        nodeSetName: "edge",
        namespace: "lvm-system",
        spec: edgeArgs().template,
      });
      expect(disks.inputs).not.toHaveProperty("agents");
      expect(disks.inputs.cluster).toEqual({
        [pulumi.runtime.specialSigKey]: pulumi.runtime.specialSecretSig,
        value: {
          kubeconfig: cluster.kubeconfig,
          serviceAccount: "lvm-provisioner",
          context: "prod",
          nodeSelector: edgeArgs().nodeSelector,
        },
      });
      expect(await pulumi.isSecret(disks.props.cluster.kubeconfig)).toBe(true);
      expect(disks.opts.additionalSecretOutputs).toEqual(expect.arrayContaining(["agents", "cluster"]));
    });

    test("agents and cluster together are refused, as are empty cluster settings", async () => {
      const agents = { "node-a": { url: "http://127.0.0.1:9443", token: "token-for-node-a-0001" } };
      const { error, registered } = await runFailingProgram(
        () =>
          new NodeSet("edge", {
            ...edgeArgs(),
            agents,
            cluster: { kubeconfig: "", serviceAccountName: "", context: "" } as never,
          }),
      );
      expect((error as ValidationError).problems).toEqual([
        { path: "args.cluster.kubeconfig", message: "must be a non-empty string or an Output of one" },
        { path: "args.cluster.context", message: "must be at least 1 character" },
        {
          path: "args.cluster.serviceAccountName",
          message: "must be a non-empty string or an Output of one",
        },
        {
          path: "args.cluster",
          message:
            "cannot be used together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
        },
      ]);
      expect(registered).toBe(0);
    });
  });

  describe("validation", () => {
    test("lists every problem with its args path, and registers nothing", async () => {
      const args = edgeArgs();
      const bad = {
        ...args,
        namespace: "Storage",
        agents: { "node-a": { url: "ftp://node-a", token: "" } },
        template: {
          ...args.template,
          deviceClasses: [
            args.template.deviceClasses![0]!,
            {
              name: "cold",
              strategy: "Thin",
              volumeGroup: "vg-data",
              thin: { poolName: "pool1", sizePercent: 120, overprovisionRatio: 1 },
            },
            { name: "warm", strategy: "thick", volumeGroup: "vg-nope" },
          ],
        },
      };
      const { error, registered } = await runFailingProgram(() => new NodeSet("edge", bad));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toBe(
        [
          'NodeSet "edge" is invalid:',
          `  args.namespace: must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "Storage")`,
          '  args.agents.node-a.url: must be an http:// or https:// URL (got "ftp://node-a")',
          "  args.agents.node-a.token: must be a non-empty string or an Output of one",
          "  args.template.deviceClasses[1].thin.sizePercent: must be between 1 and 100 (got 120)",
          '  args.template.deviceClasses[2].strategy: must be one of "Thin", "Thick" (got "thick")',
          '  args.template.deviceClasses[2].volumeGroup: names volume group "vg-nope", which is not in volumeGroups (have: vg-data)',
        ].join("\n"),
      );
      expect(registered).toBe(0);
    });

    test("names unknown fields and missing required ones", async () => {
      const { error } = await runFailingProgram(() => new NodeSet("edge", { templates: {} } as never));
      expect((error as ValidationError).problems).toEqual([
        { path: "args.template", message: "is required" },
        { path: "args.templates", message: "unknown field" },
      ]);
    });

    test("a component name that is no Kubernetes name needs nodeSetName", async () => {
      const { error } = await runFailingProgram(() => new NodeSet("Edge_A", edgeArgs()));
      expect((error as ValidationError).problems).toEqual([
        {
          path: "args.nodeSetName",
          message: `defaults to the component name, which must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.' (got "Edge_A"); set nodeSetName`,
        },
      ]);
      await expect(
        runProgram(() => new NodeSet("Edge_A", { ...edgeArgs(), nodeSetName: "edge-a" })),
      ).resolves.toHaveLength(8);
    });

    test("an agent map key must be a node name", async () => {
      const { error } = await runFailingProgram(
        () =>
          new NodeSet("edge", {
            ...edgeArgs(),
            agents: { "Node A": { url: "http://10.0.0.1:9443", token: "token-000000000000" } },
          }),
      );
      expect((error as ValidationError).problems.map((p) => p.path)).toEqual(["args.agents.Node A"]);
    });
  });

  describe("the LvmSystem that serves it (system)", () => {
    /** An LvmSystem whose TopoLVM serves these node sets, built in a stack of its own. */
    async function systemFor(
      nodeSets: Array<{ name: string } & NodeSetArgs> | undefined,
    ): Promise<LvmSystem> {
      let system: LvmSystem | undefined;
      await runProgram(
        () =>
          (system = new LvmSystem("lvm", {
            agentImage: "ghcr.io/acme/pulumi-lvm-agent:0.1.0",
            ...(nodeSets
              ? {
                  topolvm: {
                    chartVersion: "15.7.1",
                    nodeSets: nodeSets.map(({ name, nodeSelector, template }) => ({
                      name,
                      nodeSelector,
                      template,
                    })),
                  },
                }
              : {}),
          })),
      );
      return system!;
    }

    test("the same nodeSelector and template as in topolvm.nodeSets: registered, depending on the system", async () => {
      const system = await systemFor([{ name: "edge", ...edgeArgs() }]);
      const recorded = await runProgram(() => new NodeSet("edge", edgeArgs(), { system }));
      expect(recorded).toHaveLength(8);
      expect(find(recorded, NODE_SET_TYPE, "edge").opts.dependsOn).toEqual([system]);
      expect(find(recorded, CR, "edge").opts.dependsOn).toEqual([system]);
      expect(find(recorded, NODE_SET_TYPE, "edge").opts).not.toHaveProperty("system");
    });

    test("matched by nodeSetName; the system is added to dependsOn", async () => {
      const system = await systemFor([{ name: "zone-a", ...edgeArgs() }]);
      let other: k8s.core.v1.Namespace | undefined;
      const recorded = await runProgram(() => {
        other = new k8s.core.v1.Namespace("other", {});
        return new NodeSet("edge", { ...edgeArgs(), nodeSetName: "zone-a" }, { system, dependsOn: [other] });
      });
      expect(find(recorded, CR, "edge").opts.dependsOn).toEqual([other, system]);
    });

    test("a template that differs: every difference with both paths, and nothing registered", async () => {
      const system = await systemFor([{ name: "edge", ...edgeArgs() }]);
      const args = edgeArgs();
      const fast = args.template.deviceClasses![0]!;
      const changed: NodeSetArgs = {
        ...args,
        template: {
          ...args.template,
          deviceClasses: [
            { ...fast, thin: { ...fast.thin!, sizePercent: 70 } },
            args.template.deviceClasses![1]!,
            {
              name: "cold",
              strategy: "Thin",
              volumeGroup: "vg-data",
              thin: { poolName: "pool1", sizePercent: 20, overprovisionRatio: 1 },
            },
          ],
        },
      };
      const { error, registered } = await runFailingProgram(() => new NodeSet("edge", changed, { system }));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toBe(
        [
          'NodeSet "edge" is invalid:',
          `  args.template.deviceClasses[0].thin.sizePercent: is 70, but LvmSystem "lvm" has 60 at args.topolvm.nodeSets[0].template.deviceClasses[0].thin.sizePercent, from which TopoLVM's lvmd is configured: give both the same value`,
          `  args.template.deviceClasses[2]: is {"name":"cold", ...}, but LvmSystem "lvm" has none at args.topolvm.nodeSets[0].template.deviceClasses[2], from which TopoLVM's lvmd is configured: give both the same value`,
        ].join("\n"),
      );
      expect(registered).toBe(0);
    });

    test("a node selector that differs", async () => {
      const system = await systemFor([{ name: "edge", ...edgeArgs() }]);
      const everyNode = { ...edgeArgs(), nodeSelector: undefined };
      const { error, registered } = await runFailingProgram(() => new NodeSet("edge", everyNode, { system }));
      expect((error as ValidationError).problems).toEqual([
        {
          path: "args.nodeSelector",
          message: `is not set, but LvmSystem "lvm" has {"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.kubernetes.io/zone","operator":"In","values":["edge-1"]}]}]} at args.topolvm.nodeSets[0].nodeSelector, from which TopoLVM's lvmd is configured: give both the same value`,
        },
      ]);
      expect(registered).toBe(0);
    });

    test("a node set the system does not list", async () => {
      const system = await systemFor([
        { name: "edge-north", ...edgeArgs() },
        { name: "edge-south", ...edgeArgs(), nodeSelector: undefined },
      ]);
      const { error, registered } = await runFailingProgram(
        () => new NodeSet("edge-west", edgeArgs(), { system }),
      );
      expect(error.message).toBe(
        [
          'NodeSet "edge-west" is invalid:',
          `  args.nodeSetName: is "edge-west" (the component name), which LvmSystem "lvm" does not list in args.topolvm.nodeSets (it lists "edge-north", "edge-south"): TopoLVM would run no lvmd with its device classes; add { name: "edge-west", nodeSelector, template } there, with this node set's values`,
        ].join("\n"),
      );
      expect(registered).toBe(0);
      const named = await runFailingProgram(
        () => new NodeSet("west", { ...edgeArgs(), nodeSetName: "edge-west" }, { system }),
      );
      expect((named.error as ValidationError).problems[0]!.message).toMatch(
        /^is "edge-west", which LvmSystem "lvm"/,
      );
    });

    test("the node set's own problems come first, alone: nothing is compared with an invalid spec", async () => {
      const system = await systemFor([{ name: "edge", ...edgeArgs() }]);
      const { error } = await runFailingProgram(
        () => new NodeSet("edge", { ...edgeArgs(), template: { volumeGroups: [] } }, { system }),
      );
      expect((error as ValidationError).problems.map((p) => p.path)).toEqual(["args.template.volumeGroups"]);
    });

    test("a system without TopoLVM: nothing to agree with, only the dependency", async () => {
      const system = await systemFor(undefined);
      const recorded = await runProgram(() => new NodeSet("anything", edgeArgs(), { system }));
      expect(find(recorded, CR, "anything").opts.dependsOn).toEqual([system]);
    });
  });
});
