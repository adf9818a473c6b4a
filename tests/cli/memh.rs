//! The `$readmemh` reader.

use tensorcore_rtl::io::memh::parse_memh;

#[test]
fn comments_and_blank_lines_are_skipped() {
    let text = "// header\n\n3f80_0000\n  c0000000 // minus two\n";
    assert_eq!(parse_memh(text), Ok(vec![0x3f80_0000, 0xc000_0000]));
}

#[test]
fn bad_lines_are_named() {
    assert_eq!(
        parse_memh("0001\nzz\n"),
        Err("line 2: 'zz' is not one hexadecimal word".to_string())
    );
    assert!(parse_memh("@10\n").is_err());
    assert!(parse_memh("01 02\n").is_err());
    assert!(parse_memh("11112222333344445\n").is_err());
}
