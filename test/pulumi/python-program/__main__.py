"""The Python program of test/pulumi/component-provider.test.ts: pulumi-lvm's NodeSet (sandbox mode,
one node, one volume group) through the generated SDK, so the TypeScript component runs in the
component provider's process and its NodeSetDisks in the engine's dynamic-provider plugin.

Config (as test/pulumi/program's): node, agentUrl, agentToken (secret), volumeGroup, devices,
deletionPolicy (default Retain); lvmSystem=true adds an LvmSystem; clearTextFile and clearTextAs pass the
token in clear instead (agent_token). The Kubernetes objects go to the
default Kubernetes provider (config kubernetes:kubeconfig).
"""

import pulumi
# The SDK `pulumi package add` generates for the npm package "pulumi-lvm": pulumi_ + its name.
import pulumi_pulumi_lvm as lvm

config = pulumi.Config()
volume_group = config.require("volumeGroup")

template = lvm.NodeSetTemplateArgs(
    volume_groups=[
        lvm.VolumeGroupSpecArgs(
            name=volume_group,
            min_device_size="64Mi",
            device_selector=lvm.DeviceSelectorArgs(
                device_selector_terms=[
                    lvm.DeviceSelectorTermArgs(
                        match_expressions=[
                            lvm.DeviceSelectorRequirementArgs(
                                key="path", operator="In", values=config.require_object("devices")
                            )
                        ]
                    )
                ]
            ),
        )
    ],
    device_classes=[
        lvm.DeviceClassSpecArgs(
            name=f"{volume_group}-thick", strategy="Thick", volume_group=volume_group, default=True
        )
    ],
    deletion_policy=config.get("deletionPolicy") or "Retain",
)

def agent_token():
    """The agent's token, a secret (config agentToken). With `clearTextFile` set, read from that file as
    a user could by mistake: `clearTextAs` "plain" passes the text itself, "output" a non-secret Output
    of it. The component provider refuses both: the component's args are recorded in the state."""
    token_file = config.get("clearTextFile")
    if not token_file:
        return config.require_secret("agentToken")
    with open(token_file, encoding="utf-8") as f:
        token = f.read().strip()
    return pulumi.Output.from_input(token) if config.get("clearTextAs") == "output" else token


agents = {config.require("node"): lvm.AgentEndpointArgs(url=config.require("agentUrl"), token=agent_token())}

depends_on = []
if config.get_bool("lvmSystem"):
    system = lvm.LvmSystem("lvm", agent_image="pulumi-lvm-agent:test")
    depends_on.append(system)
    pulumi.export("namespace", system.namespace)

node_set = lvm.NodeSet(
    "e2e",
    template=template,
    agents=agents,
    opts=pulumi.ResourceOptions(depends_on=depends_on),
)
pulumi.export("nodes", node_set.nodes)
pulumi.export("storageClasses", node_set.storage_class_names)
