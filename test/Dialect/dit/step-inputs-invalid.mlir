// The step-input argument attributes are verified: a wrong name, a name
// given twice, or a branch on a non-text input is a diagnostic.
// RUN: dit-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{argument #0: 'dit.input' must be one of latents, timestep, sigma, sigma_next, text, pooled_text, text_mask, guidance; got "latent"}}
func.func @transformer(%x: tensor<1x4xf32> {dit.input = "latent"}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'dit.input' must be one of latents, timestep, sigma, sigma_next, text, pooled_text, text_mask, guidance; got 0 : i64}}
func.func @transformer(%x: tensor<1x4xf32> {dit.input = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{arguments #0 and #1 are both the "latents" input}}
func.func @transformer(%x: tensor<1x4xf32> {dit.input = "latents"}, %y: tensor<1x4xf32> {dit.input = "latents"}) {
  return
}

// -----

// expected-error @+1 {{arguments #0 and #1 are both the "text" input of branch 1}}
func.func @denoise_step(%a: tensor<1x4xf32> {dit.input = "text", dit.branch = 1 : i64}, %b: tensor<1x4xf32> {dit.input = "text", dit.branch = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'dit.branch' is only allowed on a text, pooled_text or text_mask input}}
func.func @denoise_step(%a: tensor<1x4xf32> {dit.input = "latents", dit.branch = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'dit.branch' must be a non-negative i64, got -1 : i64}}
func.func @denoise_step(%a: tensor<1x4xf32> {dit.input = "text", dit.branch = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{unknown argument attribute 'dit.inputs'; the dit dialect defines 'dit.input' and 'dit.branch'}}
func.func @denoise_step(%a: tensor<1x4xf32> {dit.inputs = "text"}) {
  return
}

// -----

// One text input per branch is fine, and so are the other names once each.
func.func @denoise_step(%l: tensor<1x4xf32> {dit.input = "latents"}, %t: tensor<1xf32> {dit.input = "timestep"},
                        %s: tensor<f32> {dit.input = "sigma"}, %n: tensor<f32> {dit.input = "sigma_next"},
                        %a: tensor<1x4xf32> {dit.input = "text", dit.branch = 0 : i64},
                        %p: tensor<1x2xf32> {dit.input = "pooled_text", dit.branch = 0 : i64},
                        %b: tensor<1x4xf32> {dit.input = "text", dit.branch = 1 : i64},
                        %g: tensor<1xf32> {dit.input = "guidance"}) {
  return
}
