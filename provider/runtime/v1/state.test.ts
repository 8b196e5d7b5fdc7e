import { parseInputs } from "./state";

const spec = {
  volumeGroups: [
    {
      name: "vg-data",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: ["/dev/vdb"] }] }],
      },
    },
  ],
};
const base = { nodeSetName: "edge", namespace: "lvm-system", spec };
const cluster = {
  kubeconfig: "apiVersion: v1\nusers: [{name: u, user: {token: s3cret}}]",
  serviceAccount: "lvm-provisioner",
};

describe("parseInputs: sandbox mode (the first v1 shape) and cluster mode", () => {
  test("state written before cluster mode existed still parses", () => {
    const parsed = parseInputs({ ...base, agents: { a: { url: "http://a", token: "t" } }, plans: {} });
    expect(parsed).toEqual({
      ok: true,
      inputs: { ...base, agents: { a: { url: "http://a", token: "t" } }, plans: {} },
    });
  });

  test("cluster mode", () => {
    const nodeSelector = {
      nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] }],
    };
    expect(parseInputs({ ...base, cluster: { ...cluster, context: "prod", nodeSelector } })).toMatchObject({
      ok: true,
      inputs: { cluster: { ...cluster, context: "prod", nodeSelector } },
    });
  });

  test.each([
    [
      "neither",
      {},
      [
        {
          path: "agents",
          message:
            "is required unless cluster is set (sandbox mode: node → agent URL and token; cluster mode: cluster)",
        },
      ],
    ],
    [
      "both",
      { agents: {}, cluster },
      [
        {
          path: "cluster",
          message: "cannot be set together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
        },
      ],
    ],
  ])("exactly one mode: %s is a problem", (_what, mode, problems) => {
    expect(parseInputs({ ...base, ...mode })).toEqual({ ok: false, problems });
  });

  test("problems under cluster never quote the value (a kubeconfig)", () => {
    const parsed = parseInputs({ ...base, cluster: { ...cluster, kubeconfig: 7, serviceAccount: "" } });
    expect(parsed.ok).toBe(false);
    const problems = parsed.ok ? [] : parsed.problems;
    expect(problems.map((p) => p.path)).toEqual(["cluster.kubeconfig", "cluster.serviceAccount"]);
    expect(JSON.stringify(problems)).not.toMatch(/s3cret|got/);
  });
});
