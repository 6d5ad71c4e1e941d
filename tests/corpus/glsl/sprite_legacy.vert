#version 120
// Desktop GL 1.20 sprite shader: attribute/varying, loose uniforms.
attribute vec2 position;
attribute vec2 texcoord;
uniform mat4 projection;
uniform vec2 offset;
varying vec2 v_texcoord;
varying float v_alpha;
void main() {
    v_texcoord = texcoord;
    v_alpha = 0.75;
    gl_Position = projection * vec4(position + offset, 0.0, 1.0);
}
