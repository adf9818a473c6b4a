//! Files written by real NumPy (bytes captured from `np.save`) parse, and ours read back.
use std::path::Path;
use tensorcore_rtl::io::npy::{parse_npy, Dtype};

#[test]
fn reads_numpy_float16_and_fortran_uint8() {
    let f16 = include_bytes!("../data/np_float16_3x4.npy");
    let a = parse_npy(f16, Path::new("np_float16_3x4.npy")).unwrap();
    assert_eq!(a.shape, vec![3, 4]);
    assert_eq!(a.dtype, Dtype::F16);
    for i in 0..12 {
        assert_eq!(a.value_f64(i), i as f64);
    }
    let u8f = include_bytes!("../data/np_uint8_fortran_2x3.npy");
    let b = parse_npy(u8f, Path::new("np_uint8_fortran_2x3.npy")).unwrap();
    assert_eq!(b.words(), vec![0, 1, 2, 3, 4, 5]);
    let f64a = include_bytes!("../data/np_float64_2x2.npy");
    let c = parse_npy(f64a, Path::new("np_float64_2x2.npy")).unwrap();
    assert_eq!(c.value_f64(0), 1.5);
    assert_eq!(c.value_f64(3), 4.0);
}

#[test]
fn reads_numpy_int8_and_big_endian_fortran_int32() {
    let i8s = include_bytes!("../data/np_int8_2x3.npy");
    let a = parse_npy(i8s, Path::new("np_int8_2x3.npy")).unwrap();
    assert_eq!((a.dtype, a.shape.clone()), (Dtype::I8, vec![2, 3]));
    let values: Vec<f64> = (0..6).map(|i| a.value_f64(i)).collect();
    assert_eq!(values, [-128.0, -1.0, 0.0, 1.0, 127.0, 5.0]);
    assert_eq!(a.word(0), 0x80);
    let i32s = include_bytes!("../data/np_int32_be_fortran_2x2.npy");
    let b = parse_npy(i32s, Path::new("np_int32_be_fortran_2x2.npy")).unwrap();
    assert_eq!(b.dtype, Dtype::I32);
    let values: Vec<f64> = (0..4).map(|i| b.value_f64(i)).collect();
    assert_eq!(values, [-2147483648.0, -1.0, 2147483647.0, 7.0]);
    assert_eq!(b.word(1), 0xFFFF_FFFF);
}
