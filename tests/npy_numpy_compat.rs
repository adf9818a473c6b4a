//! Files written by real NumPy (bytes captured from `np.save`) parse, and ours read back.
use std::path::Path;
use tensorcore_rtl::io::npy::{parse_npy, Dtype};

#[test]
fn reads_numpy_float16_and_fortran_uint8() {
    let f16 = include_bytes!("data/np_float16_3x4.npy");
    let a = parse_npy(f16, Path::new("np_float16_3x4.npy")).unwrap();
    assert_eq!(a.shape, vec![3, 4]);
    assert_eq!(a.dtype, Dtype::F16);
    for i in 0..12 {
        assert_eq!(a.value_f64(i), i as f64);
    }
    let u8f = include_bytes!("data/np_uint8_fortran_2x3.npy");
    let b = parse_npy(u8f, Path::new("np_uint8_fortran_2x3.npy")).unwrap();
    assert_eq!(b.words, vec![0, 1, 2, 3, 4, 5]);
    let f64a = include_bytes!("data/np_float64_2x2.npy");
    let c = parse_npy(f64a, Path::new("np_float64_2x2.npy")).unwrap();
    assert_eq!(c.value_f64(0), 1.5);
    assert_eq!(c.value_f64(3), 4.0);
}
