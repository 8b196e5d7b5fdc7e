/**
 * The agent's entry point (src/agent/main.ts) with a test hook that the published package does not
 * have: with PULUMI_LVM_AGENT_TEST_PAUSE_AFTER_STEP=N, every operation pauses forever after its
 * N-th step, so a test can kill -9 the agent there (test/agent/crash.test.ts).
 *
 *   node --import tsx test/support/agent/pausing-agent.ts <agent flags>
 */
import * as fs from "node:fs";
import { run } from "../../../src/agent/main";

export const PAUSE_ENV = "PULUMI_LVM_AGENT_TEST_PAUSE_AFTER_STEP";

const pauseAfter = Number(process.env[PAUSE_ENV]);
if (!(pauseAfter >= 1))
  throw new Error(`${PAUSE_ENV} must be a step number from 1 (got ${process.env[PAUSE_ENV]})`);
let announced = false;

void run(
  {
    argv: process.argv.slice(2),
    readFile: (file) => fs.promises.readFile(file, "utf8"),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  },
  {
    afterStep: async (index, log) => {
      if (!announced) {
        announced = true;
        log({
          msg: `TEST HOOK ${PAUSE_ENV}=${pauseAfter}: operations pause forever after step ${pauseAfter}`,
        });
      }
      if (index + 1 !== pauseAfter) return;
      log({ msg: "test hook: paused", step: index + 1 });
      await new Promise(() => undefined);
    },
  },
).then((code) => process.exit(code));
