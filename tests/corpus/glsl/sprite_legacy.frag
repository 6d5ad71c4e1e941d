#version 120
varying vec2 v_texcoord;
varying float v_alpha;
uniform sampler2D sprite;
void main() {
    vec4 c = texture2D(sprite, v_texcoord);
    gl_FragColor = vec4(c.rgb, c.a * v_alpha);
}
