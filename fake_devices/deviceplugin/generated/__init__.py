"""Stubs generated from k8s.io/kubelet@v0.33.2/pkg/apis/deviceplugin/v1beta1/api.proto by ../generate.py: never edit by hand."""
