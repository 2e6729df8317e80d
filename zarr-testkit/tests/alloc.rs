//! The counting allocator installed as this binary's global allocator.

use zarr_testkit::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::refusing_above(1 << 30);

#[test]
fn peaks_count_what_is_allocated_meanwhile() {
    let _serial = ALLOC.serial();
    let (v, peak) = ALLOC.peak_of(|| {
        let scratch = vec![1u8; 3 << 20];
        drop(scratch);
        vec![2u8; 1 << 20]
    });
    // the test harness's own threads allocate and free a little meanwhile (their small
    // buffers count against the same global counter), hence the 64 KiB of slack each way
    let slack = 64 << 10;
    assert!(
        peak >= (3 << 20) - slack,
        "the dropped scratch counts: {peak}"
    );
    assert!(
        peak < (3 << 20) + (1 << 20) - slack,
        "live bytes are not counted twice: {peak}"
    );
    let live = ALLOC.live();
    drop(v);
    assert!(
        ALLOC.live() <= live - (1 << 20),
        "freeing shrinks the live bytes"
    );
}

#[test]
fn requests_above_the_limit_fail_cleanly() {
    let _serial = ALLOC.serial();
    let mut v: Vec<u8> = Vec::new();
    assert!(v.try_reserve_exact(2 << 30).is_err(), "2 GiB is refused");
    assert!(v.try_reserve_exact(1 << 20).is_ok());
    // a growing reallocation past the limit is refused too, and the old block stays
    v.extend_from_slice(&[7; 16]);
    assert!(v.try_reserve_exact(2 << 30).is_err());
    assert_eq!(v, [7; 16]);
}

#[test]
fn large_allocations_are_recorded_by_address() {
    let _serial = ALLOC.serial();
    let (kept, seen) = ALLOC.large_allocations_of(1 << 20, || {
        let small = vec![0u8; 100];
        let big = vec![0u8; 2 << 20];
        drop(small);
        big
    });
    assert_eq!(seen, [kept.as_ptr() as usize]);
    let ((), none) = ALLOC.large_allocations_of(1 << 20, || drop(vec![0u8; 1000]));
    assert!(none.is_empty());
}
