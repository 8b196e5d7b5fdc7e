import * as path from "node:path";
import { REPO } from "../agent/harness";

/** Where the provider tests keep the backing files of their loop devices (volume groups prov-*). */
export const PROVIDER_TESTS_ROOT = "/var/tmp/provider-tests";

/** A Pulumi program of this checkout: the directory the engine starts the provider host in. */
export const PROGRAM_DIR = path.join(REPO, "examples", "quickstart");
