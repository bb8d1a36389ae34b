"""The JobFlow and JobTemplate controllers (flow.volcano.sh/v1alpha1): Volcano Jobs made from
JobTemplates in the order a JobFlow's dependsOn targets give."""
