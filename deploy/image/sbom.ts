/**
 * The image's SBOM: an SPDX 2.3 JSON document per architecture, written next to the archive by
 * build.ts from what the build already knows: the Debian packages the layer unpacked (debian.ts:
 * name, version, architecture, the .deb's sha256, the License: names of its copyright file) and the
 * npm package with its production dependencies as installed in the package layer (name, version,
 * license of each package.json). Nothing is scanned after the fact.
 *
 * Licenses: npm packages declare SPDX identifiers; Debian's copyright files use Debian's short names
 * (`GPL-2+`, `Expat`), which DEBIAN_TO_SPDX maps. A package whose names all map gets them joined with
 * AND as licenseDeclared (all its files' licenses apply to the package); otherwise NOASSERTION.
 * Either way licenseComments carries Debian's names as written.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DebianPackage } from "./debian";

export interface NpmPackage {
  readonly name: string;
  readonly version: string;
  /** package.json's license (an SPDX expression), when it has one. */
  readonly license?: string;
}

/** The packages of an installed npm tree: the root and everything under node_modules, each once. */
export async function npmPackages(dir: string): Promise<NpmPackage[]> {
  const found = new Map<string, NpmPackage>();
  const visit = (pkgDir: string) => {
    const file = join(pkgDir, "package.json");
    if (!existsSync(file)) return;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as {
      name?: string;
      version?: string;
      license?: unknown;
    };
    if (pkg.name && pkg.version)
      found.set(`${pkg.name}@${pkg.version}`, {
        name: pkg.name,
        version: pkg.version,
        ...(typeof pkg.license === "string" ? { license: pkg.license } : {}),
      });
    const modules = join(pkgDir, "node_modules");
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      if (entry.name.startsWith("@"))
        for (const scoped of readdirSync(join(modules, entry.name))) visit(join(modules, entry.name, scoped));
      else visit(join(modules, entry.name));
    }
  };
  visit(dir);
  return [...found.values()].sort((a, b) => cmp(`${a.name}@${a.version}`, `${b.name}@${b.version}`));
}

/** Debian's short license names (copyright-format 1.0) → SPDX identifiers. */
export const DEBIAN_TO_SPDX: Readonly<Record<string, string>> = {
  "Apache-2.0": "Apache-2.0",
  "Artistic-2.0": "Artistic-2.0",
  "BSD-2-clause": "BSD-2-Clause",
  "BSD-3-clause": "BSD-3-Clause",
  "BSD-4-clause": "BSD-4-Clause",
  "CC0-1.0": "CC0-1.0",
  Expat: "MIT",
  MIT: "MIT",
  "GPL-2": "GPL-2.0-only",
  "GPL-2+": "GPL-2.0-or-later",
  "GPL-3": "GPL-3.0-only",
  "GPL-3+": "GPL-3.0-or-later",
  ISC: "ISC",
  "LGPL-2": "LGPL-2.0-only",
  "LGPL-2+": "LGPL-2.0-or-later",
  "LGPL-2.1": "LGPL-2.1-only",
  "LGPL-2.1+": "LGPL-2.1-or-later",
  "LGPL-3": "LGPL-3.0-only",
  "LGPL-3+": "LGPL-3.0-or-later",
  "MPL-2.0": "MPL-2.0",
  OpenSSL: "OpenSSL",
  "Unicode-DFS-2016": "Unicode-DFS-2016",
  Zlib: "Zlib",
  zlib: "Zlib",
};

const BY_LOWER_CASE = new Map(Object.entries(DEBIAN_TO_SPDX).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * Debian's License: names as one SPDX expression, or NOASSERTION when one has no SPDX identifier
 * (names compared without case: copyright files write both "BSD-3-clause" and "BSD-3-Clause").
 */
export function spdxLicense(debianNames: readonly string[]): string {
  if (debianNames.length === 0) return "NOASSERTION";
  const terms = new Set<string>();
  for (const name of debianNames) {
    const alternatives = name.split(/\s+or\s+/i).map((n) => BY_LOWER_CASE.get(n.trim().toLowerCase()));
    if (alternatives.some((a) => !a)) return "NOASSERTION";
    terms.add(alternatives.length > 1 ? `(${alternatives.join(" OR ")})` : alternatives[0]!);
  }
  return [...terms].join(" AND ");
}

/** A Package URL component: percent-encoded, ":" kept (Debian epochs; purl-spec allows it unencoded). */
const purlPart = (s: string) => encodeURIComponent(s).replace(/%3A/g, ":");

export function debianPurl(
  p: Pick<DebianPackage, "name" | "version" | "architecture">,
  release: string,
): string {
  return `pkg:deb/debian/${purlPart(p.name)}@${purlPart(p.version)}?arch=${p.architecture}&distro=${release}`;
}

export function npmPurl(p: NpmPackage): string {
  const [scope, name] = p.name.startsWith("@") ? p.name.split("/") : [undefined, p.name];
  return `pkg:npm/${scope ? `${purlPart(scope)}/` : ""}${purlPart(name!)}@${purlPart(p.version)}`;
}

export interface SbomInput {
  /** The image reference, e.g. "localhost/pulumi-lvm:0.1.0". */
  readonly name: string;
  readonly architecture: string;
  readonly version: string;
  /** This architecture's manifest digest. */
  readonly manifestDigest: string;
  /** ISO time (the build's SOURCE_DATE_EPOCH), so the document is as reproducible as the image. */
  readonly created: string;
  /** purl distro qualifier, e.g. "debian-13". */
  readonly distro: string;
  readonly debian: readonly DebianPackage[];
  readonly npm: readonly NpmPackage[];
}

const spdxId = (kind: string, ...parts: string[]) =>
  `SPDXRef-${kind}-${parts.join("-").replace(/[^A-Za-z0-9.-]/g, "-")}`;

/** The SPDX 2.3 document of one architecture's image. */
export function spdxDocument(input: SbomInput): Record<string, unknown> {
  const imageId = spdxId("Image", input.architecture);
  const repository = input.name.slice(0, input.name.lastIndexOf(":"));
  const image = {
    SPDXID: imageId,
    name: repository,
    versionInfo: input.version,
    downloadLocation: "NOASSERTION",
    filesAnalyzed: false,
    primaryPackagePurpose: "CONTAINER",
    checksums: [{ algorithm: "SHA256", checksumValue: input.manifestDigest.replace(/^sha256:/, "") }],
    externalRefs: [
      {
        referenceCategory: "PACKAGE-MANAGER",
        referenceType: "purl",
        referenceLocator: `pkg:oci/${purlPart(repository.split("/").pop()!)}@${purlPart(input.manifestDigest)}?arch=${input.architecture}&repository_url=${purlPart(repository)}`,
      },
    ],
  };
  const debian = input.debian.map((p) => ({
    SPDXID: spdxId("deb", p.name, p.architecture),
    name: p.name,
    versionInfo: p.version,
    supplier: "Organization: Debian",
    downloadLocation: "NOASSERTION",
    filesAnalyzed: false,
    ...(p.homepage ? { homepage: p.homepage } : {}),
    ...(p.source ? { sourceInfo: `built from Debian source package ${p.source}` } : {}),
    checksums: [{ algorithm: "SHA256", checksumValue: p.sha256 }],
    licenseConcluded: "NOASSERTION",
    licenseDeclared: spdxLicense(p.licenses),
    ...(p.licenses.length
      ? { licenseComments: `Debian copyright file, License: ${p.licenses.join("; ")}` }
      : { licenseComments: "no machine-readable Debian copyright file" }),
    copyrightText: "NOASSERTION",
    externalRefs: [
      {
        referenceCategory: "PACKAGE-MANAGER",
        referenceType: "purl",
        referenceLocator: debianPurl(p, input.distro),
      },
    ],
  }));
  const npm = input.npm.map((p) => ({
    SPDXID: spdxId("npm", p.name, p.version),
    name: p.name,
    versionInfo: p.version,
    downloadLocation: "NOASSERTION",
    filesAnalyzed: false,
    licenseConcluded: "NOASSERTION",
    licenseDeclared: p.license ?? "NOASSERTION",
    copyrightText: "NOASSERTION",
    externalRefs: [
      { referenceCategory: "PACKAGE-MANAGER", referenceType: "purl", referenceLocator: npmPurl(p) },
    ],
  }));
  const contained = [...debian, ...npm];
  return {
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name: `${input.name} linux/${input.architecture}`,
    documentNamespace: `https://spdx.org/spdxdocs/pulumi-lvm-${input.version}-${input.architecture}-${input.manifestDigest.replace(/^sha256:/, "")}`,
    creationInfo: { created: input.created, creators: ["Tool: pulumi-lvm-deploy-image"] },
    documentDescribes: [imageId],
    packages: [image, ...contained],
    relationships: [
      { spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES", relatedSpdxElement: imageId },
      ...contained.map((p) => ({
        spdxElementId: imageId,
        relationshipType: "CONTAINS",
        relatedSpdxElement: p.SPDXID,
      })),
    ],
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
