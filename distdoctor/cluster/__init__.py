"""Cluster layouts: building and reading TF_CONFIG."""
