//! Training the classifier: class-balanced, L2-penalised logistic regression minimised by
//! L-BFGS with a backtracking line search, in a fixed order of operations so that two
//! trainings on the same data give the same weights bit for bit.

use super::features::Sparse;

pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^z) without overflow.
fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

pub fn dot(w: &[f64], x: &Sparse) -> f64 {
    x.iter().map(|&(i, v)| w[i as usize] * v).sum()
}

/// A weighted, L2-penalised logistic loss over sparse examples. Parameters: `dim` weights,
/// then the intercept (not penalised). The loss is divided by the weight sum, so the
/// penalty is `1 / (2 C S)` with S the weight sum (the minimiser of scikit-learn's
/// `C * sum(s_i * loss_i) + |w|^2 / 2`).
pub struct Logistic<'a> {
    pub xs: &'a [Sparse],
    pub ys: &'a [bool],
    pub weights: &'a [f64],
    pub dim: usize,
    pub c: f64,
}

impl Logistic<'_> {
    /// Class-balanced example weights: `n / (2 n_class)`.
    pub fn balanced(ys: &[bool]) -> Vec<f64> {
        let n = ys.len() as f64;
        let pos = ys.iter().filter(|&&y| y).count() as f64;
        let neg = n - pos;
        ys.iter()
            .map(|&y| n / (2.0 * if y { pos } else { neg }).max(1.0))
            .collect()
    }

    /// The loss and its gradient at `theta` (length `dim + 1`).
    pub fn value_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let (w, b) = (&theta[..self.dim], theta[self.dim]);
        let s: f64 = self.weights.iter().sum();
        let lambda = 1.0 / (self.c * s);
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut loss = 0.0;
        for ((x, &y), &sw) in self.xs.iter().zip(self.ys).zip(self.weights) {
            let z = dot(w, x) + b;
            loss += sw * (softplus(z) - if y { z } else { 0.0 });
            let r = sw * (sigmoid(z) - y as u8 as f64) / s;
            for &(i, v) in x {
                grad[i as usize] += r * v;
            }
            grad[self.dim] += r;
        }
        let mut pen = 0.0;
        for (g, &wi) in grad[..self.dim].iter_mut().zip(w) {
            *g += lambda * wi;
            pen += wi * wi;
        }
        loss / s + 0.5 * lambda * pen
    }
}

/// What an L-BFGS run ended with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub iterations: usize,
    /// The largest gradient component at the end.
    pub grad_max: f64,
    pub loss: f64,
    pub converged: bool,
}

/// The last (at most 10) steps `s` and gradient changes `y` of L-BFGS, with `rho = 1 / s.y`.
#[derive(Default)]
struct History {
    s: Vec<Vec<f64>>,
    y: Vec<Vec<f64>>,
    rho: Vec<f64>,
}

impl History {
    const M: usize = 10;

    /// The two-loop recursion: `-H g`, H the inverse-Hessian estimate of the history.
    fn direction(&self, g: &[f64]) -> Vec<f64> {
        let mut q = g.to_vec();
        let mut alpha = vec![0.0; self.s.len()];
        for k in (0..self.s.len()).rev() {
            alpha[k] = self.rho[k] * self.s[k].iter().zip(&q).map(|(a, b)| a * b).sum::<f64>();
            for (qi, yi) in q.iter_mut().zip(&self.y[k]) {
                *qi -= alpha[k] * yi;
            }
        }
        let gamma = match (self.s.last(), self.y.last()) {
            (Some(s), Some(y)) => {
                let sy: f64 = s.iter().zip(y).map(|(a, b)| a * b).sum();
                let yy: f64 = y.iter().map(|a| a * a).sum();
                sy / yy
            }
            _ => 1.0 / g.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-12),
        };
        q.iter_mut().for_each(|x| *x *= gamma);
        for (k, a) in alpha.iter().enumerate() {
            let beta = self.rho[k] * self.y[k].iter().zip(&q).map(|(a, b)| a * b).sum::<f64>();
            for (qi, si) in q.iter_mut().zip(&self.s[k]) {
                *qi += (a - beta) * si;
            }
        }
        q.into_iter().map(|x| -x).collect()
    }

    /// Keep a step when the curvature `s.y` is positive, dropping the oldest beyond [`Self::M`].
    fn push(&mut self, s: Vec<f64>, y: Vec<f64>, sy: f64) {
        if sy > 1e-12 {
            if self.s.len() == Self::M {
                self.s.remove(0);
                self.y.remove(0);
                self.rho.remove(0);
            }
            self.s.push(s);
            self.y.push(y);
            self.rho.push(1.0 / sy);
        }
    }
}

/// Minimise `f` (value and gradient) from `theta` by L-BFGS (memory 10, Armijo
/// backtracking) until the largest gradient component is below `tol` or `max_iter` steps.
/// Deterministic: no randomness, a fixed order of operations.
pub fn lbfgs(
    f: &dyn Fn(&[f64], &mut [f64]) -> f64,
    theta: &mut [f64],
    tol: f64,
    max_iter: usize,
) -> Fit {
    let n = theta.len();
    let mut g = vec![0.0; n];
    let mut loss = f(theta, &mut g);
    let mut hist = History::default();
    let gmax = |g: &[f64]| g.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut it = 0;
    let mut g_new = vec![0.0; n];
    let mut trial = vec![0.0; n];
    while it < max_iter && gmax(&g) >= tol {
        it += 1;
        let mut d = hist.direction(&g);
        let mut slope: f64 = d.iter().zip(&g).map(|(a, b)| a * b).sum();
        if slope >= 0.0 {
            // not a descent direction: restart from the gradient
            hist = History::default();
            d = g.iter().map(|x| -x).collect();
            slope = -g.iter().map(|a| a * a).sum::<f64>();
        }
        let mut step = 1.0;
        let mut new_loss;
        loop {
            for ((t, &th), &di) in trial.iter_mut().zip(theta.iter()).zip(&d) {
                *t = th + step * di;
            }
            new_loss = f(&trial, &mut g_new);
            if new_loss <= loss + 1e-4 * step * slope || step < 1e-12 {
                break;
            }
            step *= 0.5;
        }
        let s: Vec<f64> = trial.iter().zip(theta.iter()).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = g_new.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy: f64 = s.iter().zip(&y).map(|(a, b)| a * b).sum();
        theta.copy_from_slice(&trial);
        std::mem::swap(&mut g, &mut g_new);
        let improved = new_loss < loss;
        loss = new_loss;
        hist.push(s, y, sy);
        if !improved && step < 1e-12 {
            break;
        }
    }
    let grad_max = gmax(&g);
    Fit {
        iterations: it,
        grad_max,
        loss,
        converged: grad_max < tol,
    }
}

/// One binary linear model over a vocabulary's features.
#[derive(Debug, Clone, PartialEq)]
pub struct Linear {
    pub w: Vec<f64>,
    pub b: f64,
    pub fit: Fit,
}

impl Linear {
    /// Class-balanced logistic regression (see [`Logistic`]).
    pub fn train(xs: &[Sparse], ys: &[bool], dim: usize, c: f64, tol: f64) -> Linear {
        let weights = Logistic::balanced(ys);
        let problem = Logistic {
            xs,
            ys,
            weights: &weights,
            dim,
            c,
        };
        let mut theta = vec![0.0; dim + 1];
        let fit = lbfgs(&|t, g| problem.value_grad(t, g), &mut theta, tol, 1000);
        let b = theta.pop().expect("the intercept");
        Linear { w: theta, b, fit }
    }

    pub fn prob(&self, x: &Sparse) -> f64 {
        sigmoid(dot(&self.w, x) + self.b)
    }
}
