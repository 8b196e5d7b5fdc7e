import { CommandRefusedError, type Runner } from "./lvm-runner";
import { readOnlyRefusal, readOnlyRunner } from "./discovery";

describe("readOnlyRunner", () => {
  it.each([
    [["lsblk", "--json", "--bytes", "--output-all", "--paths"]],
    [["blkid", "-p", "-o", "export", "/dev/sdb"]],
    [["wipefs", "--json", "--no-act", "--output", "DEVICE,OFFSET,TYPE", "/dev/sdb"]],
    [["lvm", "fullreport", "--reportformat", "json"]],
  ])("lets discovery's reading command %j through", (argv) => {
    expect(readOnlyRefusal(argv)).toBeUndefined();
  });

  it.each([
    [["wipefs", "--all", "/dev/sdb"]],
    [["wipefs", "--no-act", "--all", "/dev/sdb"]],
    [["wipefs", "--json", "/dev/sdb"]],
    [["blkid", "/dev/sdb"]],
    [["lvm", "pvcreate", "/dev/sdb"]],
    [["pvcreate", "/dev/sdb"]],
    [["vgs"]],
    [[]],
  ])("refuses %j without running it", async (argv) => {
    const ran: string[][] = [];
    const run: Runner = async (a) => {
      ran.push([...a]);
      return { argv: a, stdout: "", stderr: "", durationMs: 0 };
    };
    await expect(readOnlyRunner(run)(argv)).rejects.toBeInstanceOf(CommandRefusedError);
    expect(ran).toEqual([]);
  });
});
