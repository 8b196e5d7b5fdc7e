import { createAuthorizer } from "./authorizer";
import { createStaticTokenClient, parseTokenFile } from "./token-file";

const T1 = "a".repeat(32);
const T2 = "b".repeat(32);

describe("parseTokenFile", () => {
  it("reads token,user,node-or-* lines, skipping comments and blank lines", () => {
    const tokens = parseTokenFile(`# sandbox tokens\n${T1},alice,node-a\n\n${T2}, bob , *\n`);
    expect(tokens.map((t) => [t.user, t.node])).toEqual([
      ["alice", "node-a"],
      ["bob", "*"],
    ]);
  });

  it("names the file and line of every problem, never the token", () => {
    let message = "";
    try {
      parseTokenFile(
        `short,alice,node-a\n${T1},alice\n${T1},bob,node-a\n${T1},carol,node-b\n${T2},,node-a\n`,
        "/etc/agent/tokens",
      );
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("/etc/agent/tokens:1: the token is shorter than 16 characters");
    expect(message).toContain('/etc/agent/tokens:2: expected "token,user,node-or-*" (3 fields, got 2)');
    expect(message).toContain("/etc/agent/tokens:4: the same token is on an earlier line");
    expect(message).toContain("/etc/agent/tokens:5: the user is empty");
    expect(message).not.toContain(T1);
  });

  it("refuses a file without tokens", () => {
    expect(() => parseTokenFile("# nothing\n", "f")).toThrow(/f has no tokens/);
  });
});

describe("createStaticTokenClient", () => {
  const client = createStaticTokenClient(parseTokenFile(`${T1},alice,node-a\n${T2},ops,*\n`));

  it("authenticates tokens in the file, for the audiences asked", async () => {
    expect(await client.tokenReview(T1, ["pulumi-lvm-agent"])).toEqual({
      authenticated: true,
      user: { username: "alice", groups: ["pulumi-lvm:token-file-node:node-a"] },
      audiences: ["pulumi-lvm-agent"],
    });
    expect(await client.tokenReview(`${T1}x`, [])).toMatchObject({ authenticated: false });
    expect(await client.tokenReview(T1.slice(1), [])).toMatchObject({ authenticated: false });
  });

  it("allows a token on the node its line names, or on every node with *", async () => {
    const attrs = (name: string) => ({ verb: "update", group: "lvm.topolvm.io", resource: "lvmnodes", name });
    const groups = async (token: string) =>
      ((await client.tokenReview(token, [])) as unknown as { user: { groups: string[] } }).user.groups;
    expect((await client.subjectAccessReview("alice", await groups(T1), attrs("node-a"))).allowed).toBe(true);
    expect((await client.subjectAccessReview("alice", await groups(T1), attrs("node-b"))).allowed).toBe(
      false,
    );
    expect((await client.subjectAccessReview("ops", await groups(T2), attrs("node-b"))).allowed).toBe(true);
    expect((await client.subjectAccessReview("mallory", await groups(T2), attrs("node-a"))).allowed).toBe(
      false,
    );
  });

  it("authorizes each token by its own line, not by another line of the same user", async () => {
    const file = parseTokenFile(`${T1},alice,node-a\n${T2},alice,node-h\n`);
    const onNodeH = createAuthorizer({
      client: createStaticTokenClient(file),
      node: "node-h",
      namespace: "lvm-system",
    });
    expect(await onNodeH(`Bearer ${T2}`)).toMatchObject({ ok: true });
    expect(await onNodeH(`Bearer ${T1}`)).toMatchObject({ ok: false, status: 403 }); // alice's node-a line
  });
});
