//! `tensorcore_rtl::par`, the one parallel map of the sweeps, the energy study and the
//! workload runner: results in the items' order for any thread count, the first failing
//! item's error in that order.

use tensorcore_rtl::par::{par_map, try_par_map, Threads};

#[test]
fn results_keep_the_items_order_for_any_thread_count() {
    let items: Vec<u64> = (0..100).collect();
    let want: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
    for t in [1, 2, 3, 8, 200] {
        let got = par_map(&items, Threads::new(t), |i, x| {
            assert_eq!(i as u64, *x);
            x * x + 1
        });
        assert_eq!(got, want, "{t} threads");
    }
}

#[test]
fn the_first_failing_item_in_order_is_the_error() {
    let items: Vec<usize> = (0..50).collect();
    for t in [1, 4] {
        let got = try_par_map(&items, Threads::new(t), |_, &x| {
            if x % 7 == 3 {
                Err(x)
            } else {
                Ok(x)
            }
        });
        assert_eq!(got, Err(3), "{t} threads");
    }
}

#[test]
fn no_items_make_no_results() {
    let none: [u8; 0] = [];
    assert!(par_map(&none, Threads::new(4), |_, x| *x).is_empty());
    assert_eq!(Threads::new(0).get(), 1);
    assert!(Threads::or_cores(None).get() >= 1);
}
