"""The Job controller. Upstream: pkg/controllers/job/."""
