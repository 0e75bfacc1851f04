import CDBus

// Conversion between libdbus's message objects and `DBusMessage` values. Runs only on a
// connection's thread. Decoding trusts libdbus's own wire validation (it rejects malformed
// messages before we see them) but never trusts that a value has the type a caller wanted;
// encoding validates everything first, because libdbus aborts on invalid input.

/// libdbus's message type codes (`DBUS_MESSAGE_TYPE_*`, macros that do not import).
enum MessageTypeCode {
    static let methodCall: Int32 = 1
    static let methodReturn: Int32 = 2
    static let error: Int32 = 3
    static let signal: Int32 = 4
}

/// Deepest container nesting accepted in a value we send (the specification's limit is 64).
private let maximumNesting = 64

enum MessageCodec {
    // MARK: - Decoding

    /// Decodes with a throwaway cache (for one-off messages).
    static func decode(_ raw: OpaquePointer) throws -> DBusMessage {
        var cache = DecodeCache()
        return try decode(raw, cache: &cache)
    }

    /// Decodes `raw`, reusing strings and parsed signatures from earlier messages in `cache`.
    static func decode(_ raw: OpaquePointer, cache: inout DecodeCache) throws -> DBusMessage {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(raw) {
        case MessageTypeCode.methodCall: kind = .methodCall
        case MessageTypeCode.methodReturn: kind = .methodReturn
        case MessageTypeCode.error: kind = .error
        case MessageTypeCode.signal: kind = .signal
        default: throw DBusError(name: DBusError.failed, message: "message of unknown type")
        }
        var message = DBusMessage(kind: kind)
        message.serial = dbus_message_get_serial(raw)
        let replySerial = dbus_message_get_reply_serial(raw)
        message.replySerial = replySerial == 0 ? nil : replySerial
        message.sender = dbus_message_get_sender(raw).map { cache.string($0, field: .sender) }
        message.destination = string(dbus_message_get_destination(raw))
        if let path = dbus_message_get_path(raw).map({ cache.string($0, field: .path) }) {
            message.path = DBusObjectPath(validated: path)  // libdbus validated it on receipt
        }
        message.interface = dbus_message_get_interface(raw).map { cache.string($0, field: .interface) }
        message.member = dbus_message_get_member(raw).map { cache.string($0, field: .member) }
        message.errorName = string(dbus_message_get_error_name(raw))
        message.noReplyExpected = dbus_message_get_no_reply(raw) != 0
        if message.kind == .methodCall { message.autoStart = dbus_message_get_auto_start(raw) != 0 }
        message.body = try decodeBody(raw, cache: &cache)
        return message
    }

    static func decodeBody(_ raw: OpaquePointer, cache: inout DecodeCache) throws -> [DBusValue] {
        let signature = string(dbus_message_get_signature(raw)) ?? ""
        if signature.isEmpty { return [] }
        let types = try cache.types(of: signature)
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        values.reserveCapacity(types.count)
        for (index, type) in types.enumerated() {
            if index == 0, type == .string {
                // The first string often names what the message is about (the interface of a
                // PropertiesChanged, a bus name) and repeats from message to message.
                var pointer: UnsafePointer<CChar>? = nil
                guard dbus_message_iter_get_arg_type(&iter) == Int32(UInt8(ascii: "s")) else {
                    throw DBusDecodingError(expected: "s", actual: String(UnicodeScalar(UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(&iter)))))
                }
                withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iter, $0) }
                values.append(.string(pointer.map { cache.string($0, field: .bodyString) } ?? ""))
            } else {
                values.append(try readValue(&iter, type))
            }
            if index + 1 < types.count {
                guard dbus_message_iter_next(&iter) != 0 else {
                    throw DBusDecodingError(expected: signature, actual: "a shorter body", context: "message body")
                }
            }
        }
        return values
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, $0) }
        return value
    }

    static func readValue(_ iter: inout DBusMessageIter, _ type: DBusType) throws -> DBusValue {
        let actual = dbus_message_iter_get_arg_type(&iter)
        guard actual == Int32(type.code) || (type.code == UInt8(ascii: "r") && actual == Int32(UInt8(ascii: "r"))) else {
            throw DBusDecodingError(expected: type.signature, actual: String(UnicodeScalar(UInt8(truncatingIfNeeded: actual))))
        }
        switch type {
        case .byte: return .byte(basic(&iter, UInt8(0)))
        case .boolean: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case .int16: return .int16(basic(&iter, Int16(0)))
        case .uint16: return .uint16(basic(&iter, UInt16(0)))
        case .int32: return .int32(basic(&iter, Int32(0)))
        case .uint32: return .uint32(basic(&iter, UInt32(0)))
        case .int64: return .int64(basic(&iter, Int64(0)))
        case .uint64: return .uint64(basic(&iter, UInt64(0)))
        case .double: return .double(basic(&iter, Double(0)))
        case .string: return .string(readString(&iter))
        case .objectPath: return .objectPath(DBusObjectPath(validated: readString(&iter)))
        case .signature: return .signature(readString(&iter))
        case .unixFD:
            // libdbus hands us a duplicate that we now own.
            return .unixFD(DBusFileDescriptor(owning: basic(&iter, Int32(-1))))
        case .variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if let inner = commonVariantType(&sub) {
                return .variant(try readValue(&sub, inner))
            }
            guard let cSignature = dbus_message_iter_get_signature(&sub) else {
                throw DBusError(name: DBusError.noMemory, message: "out of memory reading a variant")
            }
            let innerSignature = String(cString: cSignature)
            dbus_free(cSignature)
            let inner = try DBusType(parsing: innerSignature)
            return .variant(try readValue(&sub, inner))
        case .array(let element):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element == .byte {
                return .array(element: .byte, readByteArray(&sub))
            }
            var items: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                items.append(try readValue(&sub, element))
                dbus_message_iter_next(&sub)
            }
            return .array(element: element, items)
        case .dictionary(let keyType, let valueType):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == Int32(UInt8(ascii: "e")) {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                let key = try readValue(&entry, keyType)
                guard dbus_message_iter_next(&entry) != 0 else {
                    throw DBusDecodingError(expected: valueType.signature, actual: "nothing", context: "dictionary entry")
                }
                let value = try readValue(&entry, valueType)
                entries.append(DBusDictEntry(key: key, value: value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        case .structure(let fieldTypes):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            fields.reserveCapacity(fieldTypes.count)
            for (index, fieldType) in fieldTypes.enumerated() {
                fields.append(try readValue(&sub, fieldType))
                if index + 1 < fieldTypes.count { dbus_message_iter_next(&sub) }
            }
            return .structure(fields)
        }
    }

    private static func readString(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iter, $0) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// Reads an `ay` straight into its values (one allocation, no intermediate `[UInt8]`).
    private static func readByteArray(_ sub: inout DBusMessageIter) -> [DBusValue] {
        var pointer: UnsafeRawPointer? = nil
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
        guard let pointer, count > 0 else { return [] }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: Int(count))
        return [DBusValue](unsafeUninitializedCapacity: bytes.count) { buffer, initialized in
            for (index, byte) in bytes.enumerated() { (buffer.baseAddress! + index).initialize(to: .byte(byte)) }
            initialized = bytes.count
        }
    }

    /// The type inside a variant when it is a basic type or an array of one (the usual property
    /// values), read from the type codes without asking libdbus for a signature string to parse.
    /// Nil for anything else: the caller then parses the full signature.
    private static func commonVariantType(_ sub: inout DBusMessageIter) -> DBusType? {
        let code = dbus_message_iter_get_arg_type(&sub)
        if code == Int32(UInt8(ascii: "a")) {
            let element = dbus_message_iter_get_element_type(&sub)
            guard let basic = basicTypes[element] else { return nil }
            return arrayTypes[element] ?? .array(basic)
        }
        return basicTypes[code]
    }

    private static let basicTypes: [Int32: DBusType] = Dictionary(
        uniqueKeysWithValues: [DBusType.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string,
                               .objectPath, .signature, .unixFD].map { (Int32($0.code), $0) })
    /// Prebuilt so that the common array types do not allocate their indirect payload each time.
    private static let arrayTypes: [Int32: DBusType] = basicTypes.mapValues { DBusType.array($0) }

    // MARK: - Encoding

    /// Builds a libdbus message. The caller owns the returned reference (`dbus_message_unref`).
    static func encode(_ message: DBusMessage) throws -> OpaquePointer {
        try validateHeader(message)
        for value in message.body { try validate(value, depth: 0) }

        let created: OpaquePointer?
        switch message.kind {
        case .methodCall:
            guard let path = message.path, let member = message.member else {
                throw DBusError(name: DBusError.invalidArgs, message: "a method call needs a path and a member")
            }
            created = dbus_message_new_method_call(message.destination, path.rawValue, message.interface, member)
        case .signal:
            guard let path = message.path, let interface = message.interface, let member = message.member else {
                throw DBusError(name: DBusError.invalidArgs, message: "a signal needs a path, an interface and a member")
            }
            created = dbus_message_new_signal(path.rawValue, interface, member)
        case .methodReturn:
            created = dbus_message_new(MessageTypeCode.methodReturn)
        case .error:
            created = dbus_message_new(MessageTypeCode.error)
        }
        guard let raw = created else { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
        do {
            try applyHeader(message, to: raw)
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(raw, &iter)
            for value in message.body { try append(value, to: &iter) }
            return raw
        } catch {
            dbus_message_unref(raw)
            throw error
        }
    }

    private static func validateHeader(_ message: DBusMessage) throws {
        if let destination = message.destination { try DBusValidation.checkBusName(destination) }
        if let interface = message.interface { try DBusValidation.checkInterfaceName(interface) }
        if let member = message.member { try DBusValidation.checkMemberName(member) }
        if let errorName = message.errorName { try DBusValidation.checkErrorName(errorName) }
        if message.kind == .error, message.errorName == nil {
            throw DBusError(name: DBusError.invalidArgs, message: "an error message needs an error name")
        }
        if message.kind == .methodReturn || message.kind == .error, message.replySerial == nil {
            throw DBusError(name: DBusError.invalidArgs, message: "a reply needs the serial of its call")
        }
    }

    private static func applyHeader(_ message: DBusMessage, to raw: OpaquePointer) throws {
        func check(_ ok: dbus_bool_t) throws {
            if ok == 0 { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
        }
        if message.kind == .methodReturn || message.kind == .error {
            try check(dbus_message_set_reply_serial(raw, message.replySerial ?? 0))
            if let destination = message.destination { try check(dbus_message_set_destination(raw, destination)) }
        }
        if message.kind == .error, let errorName = message.errorName {
            try check(dbus_message_set_error_name(raw, errorName))
        }
        if message.kind == .signal, let destination = message.destination {
            try check(dbus_message_set_destination(raw, destination))
        }
        if message.noReplyExpected { dbus_message_set_no_reply(raw, 1) }
        if message.kind == .methodCall, !message.autoStart { dbus_message_set_auto_start(raw, 0) }
    }

    /// Rejects, before libdbus sees it, anything libdbus would abort on.
    static func validate(_ value: DBusValue, depth: Int) throws {
        guard depth <= maximumNesting else {
            throw DBusError(name: DBusError.invalidArgs, message: "value nested deeper than \(maximumNesting)")
        }
        switch value {
        case .string(let s): try DBusValidation.checkString(s)
        case .signature(let s): try DBusValidation.checkSignature(s)
        case .unixFD(let fd):
            guard fd.rawValue != nil else {
                throw DBusError(name: DBusError.invalidArgs, message: "file descriptor was already taken or closed")
            }
        case .variant(let inner): try validate(inner, depth: depth + 1)
        case .array(let element, let items):
            for item in items {
                guard item.type == element else {
                    throw DBusError(name: DBusError.invalidArgs, message: "array of '\(element)' holds a '\(item.type)'")
                }
                try validate(item, depth: depth + 1)
            }
        case .dictionary(let keyType, let valueType, let entries):
            guard keyType.isBasic else {
                throw DBusError(name: DBusError.invalidArgs, message: "dictionary key type '\(keyType)' is not basic")
            }
            for entry in entries {
                guard entry.key.type == keyType, entry.value.type == valueType else {
                    throw DBusError(
                        name: DBusError.invalidArgs,
                        message: "dictionary of '{\(keyType)\(valueType)}' holds '{\(entry.key.type)\(entry.value.type)}'")
                }
                try validate(entry.key, depth: depth + 1)
                try validate(entry.value, depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(name: DBusError.invalidArgs, message: "empty struct") }
            for field in fields { try validate(field, depth: depth + 1) }
        default: break
        }
        if case .variant = value {} else if !value.type.isBasic {
            guard value.type.signature.utf8.count <= 255 else {
                throw DBusError(name: DBusError.invalidArgs, message: "signature longer than 255 bytes")
            }
        }
    }

    private static func appendBasic<T>(_ iter: inout DBusMessageIter, _ code: UInt8, _ value: T) throws {
        var copy = value
        let ok = withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, Int32(code), $0) }
        if ok == 0 { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
    }

    private static func appendString(_ iter: inout DBusMessageIter, _ code: UInt8, _ string: String) throws {
        let ok = string.withCString { cString -> dbus_bool_t in
            var pointer: UnsafePointer<CChar>? = cString
            return withUnsafePointer(to: &pointer) { dbus_message_iter_append_basic(&iter, Int32(code), $0) }
        }
        if ok == 0 { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
    }

    private static func withContainer(
        _ iter: inout DBusMessageIter, _ code: UInt8, _ contained: String?, _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let contained {
            opened = contained.withCString { dbus_message_iter_open_container(&iter, Int32(code), $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, Int32(code), nil, &sub)
        }
        if opened == 0 { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        if dbus_message_iter_close_container(&iter, &sub) == 0 {
            throw DBusError(name: DBusError.noMemory, message: "out of memory")
        }
    }

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws {
        let code = value.type.code
        switch value {
        case .byte(let v): try appendBasic(&iter, code, v)
        case .boolean(let v): try appendBasic(&iter, code, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try appendBasic(&iter, code, v)
        case .uint16(let v): try appendBasic(&iter, code, v)
        case .int32(let v): try appendBasic(&iter, code, v)
        case .uint32(let v): try appendBasic(&iter, code, v)
        case .int64(let v): try appendBasic(&iter, code, v)
        case .uint64(let v): try appendBasic(&iter, code, v)
        case .double(let v): try appendBasic(&iter, code, v)
        case .string(let v): try appendString(&iter, code, v)
        case .objectPath(let v): try appendString(&iter, code, v.rawValue)
        case .signature(let v): try appendString(&iter, code, v)
        case .unixFD(let fd):
            // libdbus duplicates the descriptor into the message; the wrapper keeps its own.
            guard let raw = fd.rawValue else {
                throw DBusError(name: DBusError.invalidArgs, message: "file descriptor was already taken or closed")
            }
            try appendBasic(&iter, code, raw)
        case .variant(let inner):
            try withContainer(&iter, code, inner.type.signature) { sub in try append(inner, to: &sub) }
        case .array(let element, let items):
            try withContainer(&iter, code, element.signature) { sub in
                if element == .byte {
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(items.count)
                    for case .byte(let b) in items { bytes.append(b) }
                    let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
                        var base = buffer.baseAddress
                        return withUnsafePointer(to: &base) {
                            dbus_message_iter_append_fixed_array(&sub, Int32(UInt8(ascii: "y")), $0, Int32(buffer.count))
                        }
                    }
                    if ok == 0 { throw DBusError(name: DBusError.noMemory, message: "out of memory") }
                } else {
                    for item in items { try append(item, to: &sub) }
                }
            }
        case .dictionary(let keyType, let valueType, let entries):
            try withContainer(&iter, code, "{" + keyType.signature + valueType.signature + "}") { sub in
                for entry in entries {
                    try withContainer(&sub, UInt8(ascii: "e"), nil) { pair in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try withContainer(&iter, code, nil) { sub in
                for field in fields { try append(field, to: &sub) }
            }
        }
    }
}
