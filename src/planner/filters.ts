import type { VolumeGroup } from "../api";
import { formatBytes, minDeviceSizeBytes, wipeAllowed } from "../api";
import type { BlockDevice } from "../inventory/types";
import type { WipeSignature } from "./types";
import { displayName, joinNames, type NodeIndex } from "./node-index";
import type { Ownership } from "./ownership";
import { formatSize } from "./units";

/**
 * Whether a device that is not yet in one of our volume groups may join one, and if not, why — one
 * sentence per reason, each naming the device (docs/device-selection.md lists them). Signatures come
 * from probing the device (BlockDevice.signatures), never from lsblk's FSTYPE.
 */
export interface Eligibility {
  /** Empty when the device may join. */
  readonly reasons: readonly string[];
  /** Signature types the plan erases first (only with forceWipeDevicesAndDestroyAllData). */
  readonly wipe: readonly string[];
  /** The identity of each signature erased (type, UUID, label, offset), sorted by offset and type. */
  readonly wipeSignatures?: readonly WipeSignature[];
}

/** Backing files under these directories belong to Kubernetes (kubelet volumes, CSI plugins). */
export const KUBERNETES_LOOP_PREFIXES = [
  "/var/lib/kubelet/",
  "/var/lib/k0s/kubelet/",
  "/var/lib/rancher/",
  "/var/snap/microk8s/common/var/lib/kubelet/",
] as const;

/** GPT partition types a system needs (lower case). */
const BOOT_PARTITION_TYPES = new Set([
  "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", // EFI System
  "21686148-6449-6e6f-744e-656564454649", // BIOS boot
  "bc13c2ff-59e6-4262-a352-b275fd6f7172", // Linux extended boot (XBOOTLDR)
  "9e1a2d38-c612-4316-aa26-8b49521e5a8b", // PowerPC PReP boot
  "426f6f74-0000-11aa-aa11-00306543ecac", // Apple boot
  "0xef", // MBR: EFI System
  "0x41", // MBR: PReP boot
]);
const RESERVED_PARTITION_TYPES = new Set([
  "e3c9e316-0b5c-4db8-817d-f92df00215ae", // Microsoft reserved
  "8da63339-0007-60c0-c436-083ac8230908", // Linux reserved
]);
const EXTENDED_PARTITION_TYPES = new Set(["0x5", "0xf", "0x85"]);

/**
 * @param adopted the device is an orphan PV the agent created itself (PlanOptions.adoptOrphanPvs): its
 *   LVM label is ours, so it is neither a reason to exclude it nor a signature to erase.
 */
export function eligibility(
  device: BlockDevice,
  vg: VolumeGroup,
  index: NodeIndex,
  ownership: Ownership,
  adopted = false,
): Eligibility {
  const n = displayName(device);
  const reasons: string[] = [];
  let wipe: readonly string[] = NONE;
  let wipeSignatures: WipeSignature[] | undefined;

  const root = index.inventory.unresolvedRootMount;
  if (root)
    reasons.push(
      `${n} may hold the root filesystem: / is mounted from ${root.source} (${[root.fstype, root.majMin].filter(Boolean).join(", ")}), which matches no device in the inventory, so no device is used until it does`,
    );
  if (device.type === "rom") reasons.push(`${n} is an optical drive (rom) and cannot be used`);
  if (device.type === "lvm")
    reasons.push(`${n} is an LVM logical volume; volume groups are not built on logical volumes`);
  if (device.readOnly) reasons.push(`${n} is read-only`);
  if (device.removable) reasons.push(`${n} is removable media`);
  if (device.suspended) reasons.push(`${n} is a suspended device-mapper device`);
  if (
    device.type === "loop" &&
    device.backingFile &&
    KUBERNETES_LOOP_PREFIXES.some((p) => device.backingFile!.startsWith(p))
  )
    reasons.push(`${n} is a loop device backing a Kubernetes volume (${device.backingFile})`);
  const role = partitionRole(device, n);
  if (role) reasons.push(role);

  for (const mp of mountpoints(device))
    reasons.push(mp === "[SWAP]" ? `${n} is in use as swap` : `${n} is mounted at ${mp}`);
  for (const above of index.descendantsOf(device.kname)) {
    const mps = mountpoints(above);
    if (mps.length === 0) continue;
    const swap = mps.includes("[SWAP]");
    const mounted = mps.filter((m) => m !== "[SWAP]");
    const what = [
      mounted.length ? `mounted at ${joinNames(mounted)}` : "",
      swap ? "in use as swap" : "",
    ].filter(Boolean);
    reasons.push(`${n} holds ${displayName(above)}, which is ${what.join(" and ")}`);
  }
  const children = index.childrenOf(device.kname);
  if (children.length) {
    const partitions = children.filter((c) => c.type === "part");
    const holders = children.filter((c) => c.type !== "part");
    if (partitions.length) reasons.push(`${n} has partitions (${partitions.map(displayName).join(", ")})`);
    if (holders.length)
      reasons.push(`${n} is held by ${holders.map((h) => `${displayName(h)} (${h.type})`).join(", ")}`);
  }

  const owner = ownership.pvOwner(device.kname);
  if (owner?.kind === "member") reasons.push(`${n} is a physical volume of volume group ${owner.vg}`);
  else if (owner?.kind === "unmanaged")
    reasons.push(`${n} is a physical volume of volume group ${owner.vg}, which this spec does not name`);
  else if (owner?.kind === "foreign")
    reasons.push(`${n} is a physical volume of volume group ${owner.vg}, which pulumi-lvm does not own`);
  else if (device.probed !== true)
    reasons.push(
      `${n} could not be probed for signatures${device.probeError ? ` (${device.probeError})` : ""}, so it is treated as in use`,
    );
  else if (owner?.kind === "orphan" && adopted) {
    const signatureTypes = typesOf(device.signatures);
    const others = signatureTypes.filter((t) => t !== "LVM2_member");
    if (others.length)
      reasons.push(`${n} has signatures ${joinNames(others)} besides the LVM label this agent wrote`);
  } else {
    const signatureTypes = typesOf(device.signatures);
    const orphan = owner?.kind === "orphan";
    const erasable =
      orphan && !signatureTypes.includes("LVM2_member") ? [...signatureTypes, "LVM2_member"] : signatureTypes;
    if (wipeAllowed(vg)) {
      wipe = erasable;
      wipeSignatures = device.signatures.map((s) => ({
        type: s.type,
        ...(s.uuid ? { uuid: s.uuid } : {}),
        ...(s.label ? { label: s.label } : {}),
        ...(s.offset ? { offset: s.offset } : {}),
      }));
      if (orphan && !signatureTypes.includes("LVM2_member")) wipeSignatures.push({ type: "LVM2_member" });
    } else {
      if (orphan)
        reasons.push(
          `${n} is an LVM physical volume in no volume group (it may belong to a volume group whose other disks are missing); it is only reused with forceWipeDevicesAndDestroyAllData`,
        );
      const others = orphan ? signatureTypes.filter((t) => t !== "LVM2_member") : signatureTypes;
      if (others.length)
        reasons.push(
          `${n} has existing ${others.length === 1 ? "signature" : "signatures"} ${joinNames(others)}, which only forceWipeDevicesAndDestroyAllData erases`,
        );
    }
  }

  const min = minimumSize(vg);
  if (device.size < min)
    reasons.push(
      `${n} is smaller than the minimum device size ${formatBytes(min)} (it has ${formatSize(device.size)})`,
    );

  if (reasons.length || wipe.length === 0) return { reasons, wipe: NONE };
  return { reasons, wipe, wipeSignatures: sortSignatures(wipeSignatures ?? []) };
}

function sortSignatures(list: WipeSignature[]): WipeSignature[] {
  const key = (s: WipeSignature) =>
    `${(s.offset ?? "").padStart(24, " ")}\0${s.type}\0${s.uuid ?? ""}\0${s.label ?? ""}`;
  return [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const minimumSizes = new WeakMap<VolumeGroup, number>();

/** minDeviceSizeBytes, parsed once per volume group of a spec. */
function minimumSize(vg: VolumeGroup): number {
  let bytes = minimumSizes.get(vg);
  if (bytes === undefined) minimumSizes.set(vg, (bytes = minDeviceSizeBytes(vg)));
  return bytes;
}

/** Why a partition cannot be used for its role (boot, reserved, extended), if so. */
function partitionRole(device: BlockDevice, n: string): string | undefined {
  if (device.parttype === undefined && device.partlabel === undefined) return undefined;
  const type = device.parttype?.trim().toLowerCase();
  const label = device.partlabel?.trim() ?? "";
  if ((type && BOOT_PARTITION_TYPES.has(type)) || /boot|efi|bios/i.test(label) || /^esp$/i.test(label))
    return `${n} was used as a boot partition and cannot be used`;
  if ((type && RESERVED_PARTITION_TYPES.has(type)) || /reserved/i.test(label))
    return `${n} is a reserved partition (${label || type}) and cannot be used`;
  if (type && EXTENDED_PARTITION_TYPES.has(type))
    return `${n} is an extended partition, a container for logical partitions`;
  return undefined;
}

const NONE: readonly string[] = [];

function mountpoints(d: BlockDevice): readonly string[] {
  return d.mountpoints.length ? d.mountpoints.filter((m) => typeof m === "string" && m.length > 0) : NONE;
}

/** The signature types, each once, in the order first seen. */
function typesOf(signatures: BlockDevice["signatures"]): readonly string[] {
  if (signatures.length === 0) return NONE;
  if (signatures.length === 1) return [signatures[0]!.type];
  return [...new Set(signatures.map((s) => s.type))];
}
