import DBus
print("dbus-bench")
