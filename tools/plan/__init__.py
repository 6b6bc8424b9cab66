"""Plan GPU test manifests onto a fleet and render the plan for Kubernetes, Slurm and GitHub Actions."""
