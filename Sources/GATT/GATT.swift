// GATT: pure decoders and encoders for the standard wearable characteristics.
