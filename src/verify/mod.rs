//! Independent references used to check the datapath. Nothing here calls the `numerics`
//! arithmetic it verifies: values are decoded by separate code (tables written from the
//! specifications, host floats) and only plain data types are shared.

pub mod fp8_table;
