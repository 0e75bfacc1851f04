/// Builds `org.freedesktop.DBus.Introspectable` XML from the registry, including the standard
/// interfaces the connection implements and the child nodes tools like `busctl tree` walk.
enum Introspection {
    static let header =
        "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
        + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"

    static func xml(for path: DBusObjectPath, registry: ObjectRegistry) -> String {
        var xml = header + "<node>\n"
        xml += standardInterfaces(isManager: registry.managers.contains(path))
        if let object = registry.objects[path] {
            for name in object.interfaceOrder {
                guard let interface = object.interfaces[name]?.description else { continue }
                xml += interfaceXML(interface)
            }
        }
        for child in registry.childNames(of: path) {
            xml += "  <node name=\"\(escape(child))\"/>\n"
        }
        return xml + "</node>\n"
    }

    private static func interfaceXML(_ interface: DBusInterface) -> String {
        var xml = "  <interface name=\"\(escape(interface.name))\">\n"
        for method in interface.methods {
            xml += "    <method name=\"\(escape(method.name))\">\n"
            for argument in method.inputs { xml += argumentXML(argument, direction: "in") }
            for argument in method.outputs { xml += argumentXML(argument, direction: "out") }
            xml += "    </method>\n"
        }
        for signal in interface.signals {
            xml += "    <signal name=\"\(escape(signal.name))\">\n"
            for argument in signal.arguments { xml += argumentXML(argument, direction: nil) }
            xml += "    </signal>\n"
        }
        for property in interface.properties {
            xml += "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.signature))\" access=\"\(property.access.rawValue)\""
            if property.emitsChange {
                xml += "/>\n"
            } else {
                xml += ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"false\"/>\n    </property>\n"
            }
        }
        return xml + "  </interface>\n"
    }

    private static func argumentXML(_ argument: DBusArgument, direction: String?) -> String {
        let directionAttribute = direction.map { " direction=\"\($0)\"" } ?? ""
        return "      <arg name=\"\(escape(argument.name))\" type=\"\(escape(argument.type.signature))\"\(directionAttribute)/>\n"
    }

    private static func standardInterfaces(isManager: Bool) -> String {
        var xml = """
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Peer">
                <method name="Ping"/>
                <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Properties">
                <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
                <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
                <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
                <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
              </interface>

            """
        if isManager {
            xml += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
                    <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
                    <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
                  </interface>

                """
        }
        return xml
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
