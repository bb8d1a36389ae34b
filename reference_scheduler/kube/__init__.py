"""Talking to the API server: kubeconfig, quantities, and watch-fed stores."""
