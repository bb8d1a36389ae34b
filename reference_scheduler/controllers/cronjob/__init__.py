"""The CronJob controller (batch.volcano.sh/v1alpha1 CronJob): Volcano Jobs created on a cron schedule."""
