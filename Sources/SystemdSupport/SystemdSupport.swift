// SystemdSupport: journald logging and sd_notify.
