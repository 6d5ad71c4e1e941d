//! Square-matrix determinant and inverse by cofactors, for the GLSL.std.450
//! `Determinant` and `MatrixInverse` meanings at 32 and 64 bits. Matrices are
//! column-major entry lists (`m[col * n + row]`) of 2x2, 3x3 or 4x4.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A float the cofactor expansion computes in (`f32` or `f64`).
pub(crate) trait Real:
    Copy
    + From<f32>
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
}

impl Real for f32 {}
impl Real for f64 {}

/// The side of a square matrix with this many entries, if it is 2, 3 or 4.
fn side<T>(m: &[T]) -> Option<usize> {
    match m.len() {
        4 => Some(2),
        9 => Some(3),
        16 => Some(4),
        _ => None,
    }
}

/// `m` without one column and one row.
fn minor<T: Real>(m: &[T], n: usize, skip_col: usize, skip_row: usize) -> Vec<T> {
    let mut out = Vec::with_capacity((n - 1) * (n - 1));
    for c in (0..n).filter(|c| *c != skip_col) {
        for r in (0..n).filter(|r| *r != skip_row) {
            out.push(m[c * n + r]);
        }
    }
    out
}

/// `+x` at an even cofactor position, `-x` at an odd one.
fn signed<T: Real>(x: T, position: usize) -> T {
    if position.is_multiple_of(2) {
        x
    } else {
        -x
    }
}

/// The determinant, expanded along the first column (the recursion is bounded by
/// the side, at most 4).
pub(crate) fn determinant<T: Real>(m: &[T]) -> Option<T> {
    let n = side(m)?;
    if n == 2 {
        return Some(m[0] * m[3] - m[2] * m[1]);
    }
    let mut sum = T::from(0.0);
    for c in 0..n {
        sum = sum + signed(m[c * n] * determinant(&minor(m, n, c, 0))?, c);
    }
    Some(sum)
}

/// The inverse (adjugate over determinant), column-major like the input.
pub(crate) fn inverse<T: Real>(m: &[T]) -> Option<Vec<T>> {
    let n = side(m)?;
    let det = determinant(m)?;
    let mut out = vec![T::from(0.0); n * n];
    for c in 0..n {
        for r in 0..n {
            let cofactor = match n {
                2 => minor(m, n, r, c)[0],
                _ => determinant(&minor(m, n, r, c))?,
            };
            out[c * n + r] = signed(cofactor, c + r) / det;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_times_matrix_is_identity() {
        // A 3x3 with determinant 1 (column-major): [[2,1,0],[1,1,0],[0,0,1]].
        let m: [f64; 9] = [2.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(determinant(&m), Some(1.0));
        let inv = inverse(&m).unwrap();
        for c in 0..3 {
            for r in 0..3 {
                let dot: f64 = (0..3).map(|k| m[k * 3 + r] * inv[c * 3 + k]).sum();
                assert_eq!(dot, if c == r { 1.0 } else { 0.0 }, "entry ({c}, {r})");
            }
        }
    }

    #[test]
    fn four_by_four_determinant_and_bad_sizes() {
        let diag: [f32; 16] = [
            2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 5.0,
        ];
        assert_eq!(determinant(&diag), Some(120.0));
        assert_eq!(determinant(&[1.0f32; 5]), None);
        assert_eq!(inverse(&[1.0f64; 3]), None);
    }
}
