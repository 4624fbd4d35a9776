"""What keeps secrets and ignored files out: redaction, the `.memignore` denylist, the gate every write passes."""
