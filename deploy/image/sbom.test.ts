import { copyrightLicenses } from "./debian";
import { debianPurl, npmPurl, spdxDocument, spdxLicense } from "./sbom";

describe("the image's SPDX SBOM", () => {
  it("reads the License: names of a machine-readable Debian copyright file, and none of a free-form one", () => {
    const dep5 = [
      "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
      "",
      "Files: *",
      "Copyright: 2000 Someone",
      "License: GPL-2+",
      "",
      "Files: lib/*",
      "License: LGPL-2.1+ or GPL-2+",
      "",
      "License: GPL-2+",
      " On Debian systems, see /usr/share/common-licenses/GPL-2.",
    ].join("\n");
    expect(copyrightLicenses(dep5)).toEqual(["GPL-2+", "LGPL-2.1+ or GPL-2+"]);
    expect(copyrightLicenses("This package was debianized by ...\nLicense: GPL\n")).toEqual([]);
  });

  it("maps Debian's license names to an SPDX expression, or says NOASSERTION", () => {
    expect(spdxLicense(["GPL-2+", "LGPL-2.1+ or GPL-2+", "Expat"])).toBe(
      "GPL-2.0-or-later AND (LGPL-2.1-or-later OR GPL-2.0-or-later) AND MIT",
    );
    expect(spdxLicense(["GPL-2+", "public-domain"])).toBe("NOASSERTION");
    expect(spdxLicense([])).toBe("NOASSERTION");
  });

  it("names packages by purl: Debian's with arch and distro, epochs kept, '+' encoded; npm's with their scope", () => {
    expect(debianPurl({ name: "libc6", version: "2.41-12", architecture: "arm64" }, "debian-13")).toBe(
      "pkg:deb/debian/libc6@2.41-12?arch=arm64&distro=debian-13",
    );
    expect(debianPurl({ name: "x", version: "1:2.3+dfsg-1", architecture: "all" }, "debian-13")).toBe(
      "pkg:deb/debian/x@1:2.3%2Bdfsg-1?arch=all&distro=debian-13",
    );
    expect(npmPurl({ name: "@pulumi/pulumi", version: "3.1.0" })).toBe("pkg:npm/%40pulumi/pulumi@3.1.0");
    expect(npmPurl({ name: "zod", version: "4.0.0" })).toBe("pkg:npm/zod@4.0.0");
  });

  it("describes the image, which contains each package once, with valid and unique SPDX IDs", () => {
    const doc = spdxDocument({
      name: "localhost/pulumi-lvm:0.1.0",
      architecture: "arm64",
      version: "0.1.0",
      manifestDigest: `sha256:${"a".repeat(64)}`,
      created: "2026-11-21T09:15:44Z",
      distro: "debian-13",
      debian: [
        {
          name: "libc6",
          version: "2.41-12",
          architecture: "arm64",
          licenses: ["GPL-2+"],
          sha256: "b".repeat(64),
        },
        { name: "tzdata", version: "2025b", architecture: "all", licenses: [], sha256: "c".repeat(64) },
      ],
      npm: [
        { name: "pulumi-lvm", version: "0.1.0", license: "Apache-2.0" },
        { name: "@scope/x", version: "1.0.0" },
      ],
    }) as { packages: Array<Record<string, unknown>>; relationships: Array<Record<string, string>> };
    expect(doc).toMatchObject({ spdxVersion: "SPDX-2.3", documentDescribes: ["SPDXRef-Image-arm64"] });
    const ids = doc.packages.map((p) => p.SPDXID as string);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^SPDXRef-[A-Za-z0-9.-]+$/);
    expect(doc.packages.find((p) => p.name === "libc6")).toMatchObject({
      licenseDeclared: "GPL-2.0-or-later",
      checksums: [{ algorithm: "SHA256", checksumValue: "b".repeat(64) }],
    });
    expect(doc.packages.find((p) => p.name === "tzdata")).toMatchObject({ licenseDeclared: "NOASSERTION" });
    expect(doc.packages.find((p) => p.name === "@scope/x")).toMatchObject({ licenseDeclared: "NOASSERTION" });
    expect(
      doc.relationships.filter((r) => r.relationshipType === "CONTAINS").map((r) => r.relatedSpdxElement),
    ).toEqual(ids.filter((id) => id !== "SPDXRef-Image-arm64"));
  });
});
