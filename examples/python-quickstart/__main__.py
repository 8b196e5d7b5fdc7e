"""pulumi-lvm's quickstart (examples/quickstart/index.ts) in Python.

The components are the TypeScript ones, run by pulumi-lvm's component provider; `pulumi package add`
generated the `pulumi_pulumi_lvm` module this imports (README.md).
"""

import pulumi
import pulumi_pulumi_lvm as lvm

config = pulumi.Config()

# The nodes labelled node-role.kubernetes.io/storage=true.
node_selector = lvm.NodeSelectorSpecArgs(
    node_selector_terms=[
        lvm.NodeSelectorTermArgs(
            match_expressions=[
                lvm.NodeSelectorRequirementArgs(
                    key="node-role.kubernetes.io/storage", operator="In", values=["true"]
                )
            ]
        )
    ]
)

# One volume group from two disks picked by serial, and one thin device class on it.
template = lvm.NodeSetTemplateArgs(
    volume_groups=[
        lvm.VolumeGroupSpecArgs(
            name="vg-data",
            device_selector=lvm.DeviceSelectorArgs(
                device_selector_terms=[
                    lvm.DeviceSelectorTermArgs(
                        match_expressions=[
                            lvm.DeviceSelectorRequirementArgs(
                                key="serial",
                                operator="In",
                                values=config.require_object("diskSerials"),
                            )
                        ]
                    )
                ]
            ),
        )
    ],
    device_classes=[
        lvm.DeviceClassSpecArgs(
            name="thin",
            strategy="Thin",
            volume_group="vg-data",
            default=True,
            thin=lvm.ThinPoolSpecArgs(pool_name="pool0", size_percent=90, overprovision_ratio=10),
            # StorageClass and VolumeSnapshotClass "lvms-thin" (the API's default naming).
        )
    ],
)

# Air-gapped sites (and a local cluster): the agent image and TopoLVM's chart from where you keep
# them, by config, as in the TypeScript quickstart: `agentImage` (+ `agentImagePullPolicy: Never` for
# an image loaded on the nodes), `topolvmChartPath` (a chart directory or .tgz) or `topolvmRepository`
# (an HTTP or oci:// mirror), and `topolvmValues` (e.g. TopoLVM's own image from a mirror). An arg
# left None is not passed: the component's default applies.
system = lvm.LvmSystem(
    "lvm",
    # Default: the image `npm run image` builds for this version (docs/image.md); set agentImage to your
    # registry's copy of it.
    agent_image=config.get("agentImage"),
    agent_image_pull_policy=config.get("agentImagePullPolicy"),
    tolerations=[
        lvm.TolerationArgs(key="node-role.kubernetes.io/storage", operator="Exists", effect="NoSchedule")
    ],
    # TypeScript declares the node set once and gives it to a Topolvm component ({ system, nodeSets });
    # those are resource options, which only TypeScript can pass (docs/languages.md). Here TopoLVM is
    # LvmSystem's `topolvm` arg, with a second copy of the node set: the same values as the NodeSet's.
    topolvm=lvm.TopolvmSettingsArgs(
        chart_version=config.get("topolvmChartVersion") or "15.7.1",
        chart_path=config.get("topolvmChartPath"),
        repository=config.get("topolvmRepository"),
        values=config.get_object("topolvmValues"),
        node_sets=[lvm.TopolvmNodeSetArgs(name="quickstart", node_selector=node_selector, template=template)],
    ),
)

# Sandbox mode: set `agentUrl` (and the secret `agentToken`) to let Pulumi plan and apply through a
# node agent directly; `pulumi preview` then shows the node's plan.
agent_url = config.get("agentUrl")
agents = (
    {
        config.get("node")
        or "node-1": lvm.AgentEndpointArgs(url=agent_url, token=config.require_secret("agentToken"))
    }
    if agent_url
    else None
)

# TypeScript passes `{ system }` (a NodeSet option that also checks the node set against
# topolvm.nodeSets); an option is not part of the schema, so here it is only a dependency.
node_set = lvm.NodeSet(
    "quickstart",
    node_selector=node_selector,
    template=template,
    agents=agents,
    opts=pulumi.ResourceOptions(depends_on=[system]),
)

pulumi.export("namespace", system.namespace)
pulumi.export("storageClass", node_set.storage_class_names.apply(lambda names: names.get("thin")))
pulumi.export("snapshotClass", node_set.snapshot_class_names.apply(lambda names: names.get("thin")))
pulumi.export("nodes", node_set.nodes)
