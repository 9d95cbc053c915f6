use ragstats::gpu::AdapterPolicy;
use ragstats::resample::*;
fn main() {
    let g = GpuBackend::new(AdapterPolicy::Any).unwrap();
    for q in [800_000usize, 900_000] {
        for kind in 0..3 {
            let d: Vec<f32> = (0..q).map(|i| match kind { 0 => 1.0, 1 => (i % 7) as f32, _ => if i < 840_000 {0.0} else {1.0} }).collect();
            let job = ResampleJob { strata: vec![&d], k: 1, seed: 77, replicates: 0..2 };
            let c = CpuBackend::new().resample_sums(&job, &|_| {}).unwrap();
            let gg = g.resample_sums(&job, &|_| {}).unwrap();
            println!("q={q} kind={kind} cpu={c:?} gpu={gg:?}");
        }
    }
}
