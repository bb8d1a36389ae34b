"""Names the job plugins write (upstream: each plugin's const.go)."""

SVC_MOUNT_PATH = "/etc/volcano"
SSH_PATH = "/root/.ssh"
SSH_PRIVATE = "id_rsa"
SSH_PUBLIC = "id_rsa.pub"
SSH_AUTHORIZED = "authorized_keys"
SSH_CONFIG = "config"
HCCL_RANK = "hccl/rankIndex"
# Marks an owned object the controller creates once and never rewrites (the ssh keys).
CREATE_ONLY = "x-reference-create-only"
