"""The Python program of test/pulumi/python-lvm-system.test.ts: pulumi-lvm's LvmSystem (CRDs, RBAC,
agent DaemonSet, operator, TopoLVM from its chart on disk) and, with clusterNodeSet=true, a NodeSet
in cluster mode, through the generated SDK: the TypeScript components run in the component
provider's process, their Kubernetes objects go through the real Kubernetes provider, and the
NodeSet's NodeSetDisks reaches the node's agent through the API server's pod proxy.

Config: topolvmChartPath, agentImage, volumeGroup, devices, clusterNodeSet; the cluster is the
default Kubernetes provider's (kubernetes:kubeconfig, a secret), which the NodeSet uses too.
"""

import re

import pulumi
from pulumi.runtime import rpc

# The SDK `pulumi package add` generates for the npm package "pulumi-lvm": pulumi_ + its name.
import pulumi_pulumi_lvm as lvm

config = pulumi.Config()
volume_group = config.require("volumeGroup")

# Workloads the Kubernetes provider awaits until they roll out, and a Service until it has endpoints.
# An LVMNodeSet is awaited until the operator reports its nodes built (NodeSet's awaitNodesReady), and no operator
# pod runs here either.
AWAITED = re.compile(
    r"^kubernetes:(apps/v1:(DaemonSet|Deployment|StatefulSet)|core/v1:Service|lvm\.topolvm\.io/v2alpha1:LVMNodeSet)$"
)


def edited(value, edit):
    """`edit` applied to a property value as a transform receives it: a value holding a secret comes
    wrapped (the secretness pushed up to it, e.g. the webhooks with their CA bundle) and stays so."""
    if rpc.is_rpc_secret(value):
        return rpc.wrap_rpc_secret(edit(rpc.unwrap_rpc_secret(value)))
    return edit(value)


def fail_open(webhooks):
    if not isinstance(webhooks, list):  # unknown in a preview
        return webhooks
    return [{**w, "failurePolicy": "Ignore"} if isinstance(w, dict) else w for w in webhooks]


def with_skip_await(metadata):
    if not isinstance(metadata, dict):
        return metadata
    annotations = metadata.get("annotations")
    return {
        **metadata,
        "annotations": {**(annotations if isinstance(annotations, dict) else {}), "pulumi.com/skipAwait": "true"},
    }


def skip_await_without_kubelet(args: pulumi.ResourceTransformArgs):
    """TEST-ONLY TRANSFORM, because the test's cluster has no kubelet: no pod ever runs, so awaiting a
    rollout could only time out. The same as test/pulumi/kubernetes-program's transformation, written
    as a Python `transforms` option: the engine runs it on every child the component provider
    registers under the LvmSystem (and under its TopoLVM chart) and the NodeSet. Every object is still created, and
    read back by the test. Never in a user's program."""
    props = args.props
    # No operator pod serves the admission webhook: with failurePolicy Fail no LVMNodeSet could be
    # created. The configuration is still created and read back; its calls fail open. Nor does an
    # operator set its caBundle, which the provider would wait for (pulumi.com/waitFor).
    if args.type_ == "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration":
        webhooks = edited(props.get("webhooks"), fail_open)
        metadata = edited(props.get("metadata"), with_skip_await)
        return pulumi.ResourceTransformResult({**props, "webhooks": webhooks, "metadata": metadata}, args.opts)
    if args.type_ == "kubernetes:helm.sh/v4:Chart":
        return pulumi.ResourceTransformResult({**props, "skipAwait": True}, args.opts)
    if AWAITED.match(args.type_):
        metadata = edited(props.get("metadata"), with_skip_await)
        return pulumi.ResourceTransformResult({**props, "metadata": metadata}, args.opts)
    return None


# The nodes labelled for this test: the one Node object the test creates.
node_selector = lvm.NodeSelectorSpecArgs(
    node_selector_terms=[
        lvm.NodeSelectorTermArgs(
            match_expressions=[
                lvm.NodeSelectorRequirementArgs(key="pulumi-lvm.test/storage", operator="In", values=["true"])
            ]
        )
    ]
)

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
    # A thick class only: a thin class's VolumeSnapshotClass needs the snapshot CRDs, not there.
    device_classes=[
        lvm.DeviceClassSpecArgs(
            name=f"{volume_group}-thick", strategy="Thick", volume_group=volume_group, default=True
        )
    ],
    deletion_policy="Retain",
)

system = lvm.LvmSystem(
    "lvm",
    agent_image=config.get("agentImage") or "pulumi-lvm:py-e2e",
    agent_image_pull_policy="Never",
    agent_args=["--command-timeout", "5m"],
    # The test's agent process serves plain HTTP on the (mapped) pod network.
    agent_plain_http=True,
    topolvm=lvm.TopolvmSettingsArgs(
        chart_version="17.1.0",
        chart_path=config.require("topolvmChartPath"),
        node_sets=[lvm.TopolvmNodeSetArgs(name="e2e", node_selector=node_selector, template=template)],
        # No cert-manager in the test's cluster: the webhook's TLS secret is named instead.
        values={"webhook": {"certManager": False, "secretName": "topolvm-webhook-tls"}},
    ),
    opts=pulumi.ResourceOptions(transforms=[skip_await_without_kubelet]),
)
pulumi.export("namespace", system.namespace)
pulumi.export("agentDaemonSet", system.agent_daemon_set_name)
pulumi.export("operatorDeployment", system.operator_deployment_name)
pulumi.export("provisioner", system.provisioner_service_account_name)

if config.get_bool("clusterNodeSet"):
    # Cluster mode: Pulumi plans and applies through the agents, reached through the API server as the
    # LvmSystem's provisioner. TypeScript's `{ system }` option is a dependency here (docs/languages.md).
    node_set = lvm.NodeSet(
        "e2e",
        node_selector=node_selector,
        template=template,
        cluster=lvm.ClusterModeArgs(
            kubeconfig=pulumi.Config("kubernetes").require_secret("kubeconfig"),
            service_account_name=system.provisioner_service_account_name,
        ),
        # Its LVMNodeSet too: up waits until the operator built the set (awaitNodesReady), and no
        # operator pod runs here.
        opts=pulumi.ResourceOptions(depends_on=[system], transforms=[skip_await_without_kubelet]),
    )
    pulumi.export("nodes", node_set.nodes)
    pulumi.export("storageClasses", node_set.storage_class_names)
