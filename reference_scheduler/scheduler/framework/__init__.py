"""The session, its extension points, and statements. Upstream: pkg/scheduler/framework/."""
